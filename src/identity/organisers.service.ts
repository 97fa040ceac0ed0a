import { Injectable } from '@nestjs/common';
import { newResourceId } from '../../libs/ids/resource-id';
import type { Transaction } from '../database/unit-of-work';
import type { CreateOrganiserDto, OrganiserResponse } from './dto/identity.dto';
import { OrganiserRepository } from './organiser.repository';

@Injectable()
export class OrganisersService {
  constructor(private readonly organisers: OrganiserRepository) {}

  async create(input: CreateOrganiserDto): Promise<OrganiserResponse> {
    const organiser = { id: newResourceId('org'), name: input.name, placeholder: input.placeholder === true };
    await this.organisers.insert(organiser);
    return organiser;
  }

  /** Whether the organiser exists; inside the caller's transaction when one is given. */
  async exists(organiserId: string, tx?: Transaction): Promise<boolean> {
    return this.organisers.exists(organiserId, tx?.manager);
  }

  async list(): Promise<OrganiserResponse[]> {
    return this.organisers.list();
  }
}
