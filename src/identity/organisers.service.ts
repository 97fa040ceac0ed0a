import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { newResourceId } from '../../libs/ids/resource-id';
import type { CreateOrganiserDto, OrganiserResponse } from './dto/identity.dto';
import { OrganiserEntity } from './entities/organiser.entity';

@Injectable()
export class OrganisersService {
  constructor(@InjectRepository(OrganiserEntity) private readonly organisers: Repository<OrganiserEntity>) {}

  async create(input: CreateOrganiserDto): Promise<OrganiserResponse> {
    const organiser = { id: newResourceId('org'), name: input.name, placeholder: input.placeholder === true };
    await this.organisers.insert({ ...organiser });
    return organiser;
  }

  async exists(organiserId: string): Promise<boolean> {
    return this.organisers.exists({ where: { id: organiserId } });
  }

  async list(): Promise<OrganiserResponse[]> {
    const rows = await this.organisers.find({ order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(({ id, name, placeholder }) => ({ id, name, placeholder }));
  }
}
