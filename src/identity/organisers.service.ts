import { Injectable } from '@nestjs/common';
import { newResourceId } from '../../libs/ids/resource-id';
import type { Page } from '../common/envelope/page';
import type { PageRequest } from '../common/pagination/page-request';
import type { Transaction } from '../database/unit-of-work';
import type { CreateOrganiserDto, OrganiserResponse } from './dto/identity.dto';
import type { OrganiserListItem } from './organiser.repository';
import { OrganiserRepository } from './organiser.repository';

@Injectable()
export class OrganisersService {
  constructor(private readonly organisers: OrganiserRepository) {}

  async create(input: CreateOrganiserDto): Promise<OrganiserResponse> {
    return this.organisers.insert({
      id: newResourceId('org'),
      name: input.name,
      placeholder: input.placeholder === true,
    });
  }

  /** Whether the organiser exists; inside the caller's transaction when one is given. */
  async exists(organiserId: string, tx?: Transaction): Promise<boolean> {
    return this.organisers.exists(organiserId, tx);
  }

  async list(): Promise<OrganiserResponse[]> {
    return this.organisers.list();
  }

  /** The dashboard's organiser page; null when there is no such organiser. */
  async find(organiserId: string): Promise<OrganiserResponse | null> {
    return this.organisers.find(organiserId);
  }

  /** The dashboard's list, newest first: every organiser, or those whose id is `search` or whose name contains it. */
  page(request: PageRequest, search: string | null): Promise<Page<OrganiserListItem>> {
    return this.organisers.page(request, search);
  }
}

export type { OrganiserListItem } from './organiser.repository';
