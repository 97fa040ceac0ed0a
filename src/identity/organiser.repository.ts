import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Page } from '../common/envelope/page';
import { KeysetPager, type Ordering } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { containsPattern } from '../common/pagination/search-pattern';
import { isoTimestampSql } from '../database/iso-timestamp-sql';
import { OrganiserEntity } from './entities/organiser.entity';

export interface OrganiserRow {
  id: string;
  name: string;
  placeholder: boolean;
}

export interface OrganiserListItem extends OrganiserRow {
  createdAt: string;
}

/**
 * All SQL on `organiser`. Other contexts call OrganisersService (its reads
 * take the caller's transaction) or compose placeholder-organisers.sql-fragment.ts.
 */
@Injectable()
export class OrganiserRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pager: KeysetPager,
  ) {}

  async insert(organiser: OrganiserRow): Promise<void> {
    await this.dataSource.getRepository(OrganiserEntity).insert({ ...organiser });
  }

  async exists(organiserId: string, db: EntityManager | DataSource = this.dataSource): Promise<boolean> {
    const rows = await db.query<unknown[]>('SELECT 1 FROM organiser WHERE id = $1', [organiserId]);
    return rows.length > 0;
  }

  async find(organiserId: string): Promise<OrganiserRow | null> {
    const row = await this.dataSource.getRepository(OrganiserEntity).findOne({ where: { id: organiserId } });
    return row === null ? null : { id: row.id, name: row.name, placeholder: row.placeholder };
  }

  /** Newest first: every organiser, or those whose id is `search` or whose name contains it. */
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

  async list(): Promise<OrganiserRow[]> {
    const rows = await this.dataSource.getRepository(OrganiserEntity).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(({ id, name, placeholder }) => ({ id, name, placeholder }));
  }
}
