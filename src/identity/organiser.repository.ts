import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Page } from '../common/envelope/page';
import { defineKeysetList, KeysetPager, type Ordering } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { containsPattern } from '../common/pagination/search-pattern';
import { column, defineColumns, isoTime } from '../database/sql/sql-columns';
import { sql } from '../database/sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from '../database/sql/sql-statement';
import { Database, type SqlTarget } from '../database/sql/sql-target';
import { OrganiserEntity } from './entities/organiser.entity';

/** An organiser as the internal API shows it. */
export const ORGANISER_VIEW = defineColumns({
  id: column<string>('o.id'),
  name: column<string>('o.name'),
  placeholder: column<boolean>('o.placeholder'),
});
export type OrganiserView = typeof ORGANISER_VIEW.View;

/** An organiser as the dashboard lists it. */
export const ORGANISER_LIST_VIEW = defineColumns({
  id: column<string>('o.id'),
  name: column<string>('o.name'),
  placeholder: column<boolean>('o.placeholder'),
  createdAt: isoTime('o.created_at'),
});
export type OrganiserListItem = typeof ORGANISER_LIST_VIEW.View;

const EXISTS = defineStatement<{ organiserId: string }>(
  (p) => sql`SELECT 1 FROM organiser WHERE id = ${p.organiserId}`,
  { prepared: false },
);

const BY_ID = defineStatement<{ organiserId: string }, OrganiserView>(
  (p) => sql`SELECT ${ORGANISER_VIEW.select} FROM organiser o WHERE o.id = ${p.organiserId}`,
  { prepared: false },
);

const ALL = defineStatement<NoParams, OrganiserView>(
  () => sql`SELECT ${ORGANISER_VIEW.select} FROM organiser o ORDER BY o.created_at, o.id`,
  { prepared: false },
);

const DASHBOARD_ORDERING: Ordering = {
  name: 'dashboard_organisers:created_at_desc',
  column: 'o.created_at',
  direction: 'DESC',
};

/** The dashboard's list, newest first: every organiser, or (SEARCHED) those whose id is the term or whose name contains it. */
const EVERY = defineKeysetList<NoParams, OrganiserListItem>({
  select: ORGANISER_LIST_VIEW.select,
  from: 'organiser o',
  idColumn: 'o.id',
  where: () => [],
  anchorTable: 'organiser',
  orderings: { default: DASHBOARD_ORDERING, updatedAfter: DASHBOARD_ORDERING },
  prepared: false,
});
const SEARCHED = defineKeysetList<{ search: string; pattern: string }, OrganiserListItem>({
  select: ORGANISER_LIST_VIEW.select,
  from: 'organiser o',
  idColumn: 'o.id',
  where: (p) => [sql`(o.id = ${p.search} OR o.name ILIKE ${p.pattern})`],
  anchorTable: 'organiser',
  orderings: { default: DASHBOARD_ORDERING, updatedAfter: DASHBOARD_ORDERING },
  prepared: false,
});

/**
 * All SQL on `organiser`. Other contexts call OrganisersService (its reads
 * take the caller's transaction) or compose placeholder-organisers.sql-fragment.ts.
 */
@Injectable()
export class OrganiserRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly database: Database,
    private readonly pager: KeysetPager,
  ) {}

  /** Inserts the organiser (a plain entity write) and returns its view as stored. */
  async insert(organiser: OrganiserView): Promise<OrganiserView> {
    await this.dataSource.getRepository(OrganiserEntity).insert({ ...organiser });
    const inserted = await BY_ID.one({ organiserId: organiser.id }, this.database);
    if (inserted === null) throw new Error('the organiser just inserted is not there');
    return inserted;
  }

  async exists(organiserId: string, target: SqlTarget = this.database): Promise<boolean> {
    return (await EXISTS.one({ organiserId }, target)) !== null;
  }

  async find(organiserId: string): Promise<OrganiserView | null> {
    return BY_ID.one({ organiserId }, this.database);
  }

  /** Newest first: every organiser, or those whose id is `search` or whose name contains it. */
  page(request: PageRequest, search: string | null): Promise<Page<OrganiserListItem>> {
    if (search === null || search === '') return this.pager.page(EVERY, NO_PARAMS, request);
    return this.pager.page(SEARCHED, { search, pattern: containsPattern(search) }, request);
  }

  async list(): Promise<OrganiserView[]> {
    return ALL.rows(NO_PARAMS, this.database);
  }
}
