import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { newResourceId } from '../../libs/ids/resource-id';
import type { Page } from '../common/envelope/page';
import { KeysetPager, type Ordering } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { containsPattern } from '../common/pagination/search-pattern';
import { isoTimestampSql } from '../database/iso-timestamp-sql';
import type { CreateOrganiserDto, OrganiserResponse } from './dto/identity.dto';
import { OrganiserEntity } from './entities/organiser.entity';

@Injectable()
export class OrganisersService {
  constructor(
    @InjectRepository(OrganiserEntity) private readonly organisers: Repository<OrganiserEntity>,
    private readonly pager: KeysetPager,
  ) {}

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

  /** The dashboard's organiser page; null when there is no such organiser. */
  async find(organiserId: string): Promise<OrganiserResponse | null> {
    const row = await this.organisers.findOne({ where: { id: organiserId } });
    return row === null ? null : { id: row.id, name: row.name, placeholder: row.placeholder };
  }

  /** The dashboard's list, newest first: every organiser, or those whose id is `search` or whose name contains it. */
  page(request: PageRequest, search: string | null): Promise<Page<OrganiserListItem>> {
    const ordering: Ordering = {
      name: 'dashboard_organisers:created_at_desc',
      column: 'o.created_at',
      direction: 'DESC',
    };
    const filtered = search !== null && search !== '';
    return this.pager.page(
      {
        select: `o.id, o.name, o.placeholder, ${isoTimestampSql('o.created_at')} AS "createdAt"`,
        from: 'organiser o',
        idColumn: 'o.id',
        where: filtered ? ['(o.id = $1 OR o.name ILIKE $2)'] : [],
        params: filtered ? [search, containsPattern(search)] : [],
        anchorTable: 'organiser',
        orderings: { default: ordering, updatedAfter: ordering },
      },
      request,
      (row: OrganiserListItem) => ({
        id: row.id,
        name: row.name,
        placeholder: row.placeholder,
        createdAt: row.createdAt,
      }),
    );
  }
}

export interface OrganiserListItem extends OrganiserResponse {
  createdAt: string;
}
