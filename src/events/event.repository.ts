import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Principal, PrincipalType } from '../common/auth-context/access';
import type { Page } from '../common/envelope/page';
import { KeysetPager, prepareKeysetList, type PreparedKeysetList } from '../common/pagination/keyset-pager';
import { preparedStatement, type PreparedStatement } from '../common/persistence/prepared-statement';
import { EntityStatements } from '../common/persistence/entity-statements';
import { SqlStatements, type StatementTarget } from '../common/persistence/sql-statements';
import type { PageRequest } from '../common/pagination/page-request';
import { isPlaceholderOrganiserSql } from '../identity/placeholder-organisers.sql-fragment';
import { locationIdsOfVenueSql } from '../venues/venue-location.sql-fragment';
import { EventEntity } from './entities/event.entity';
import { EVENT_RESPONSE_COLUMNS, type EventResponseRow } from './event.presenter';

/**
 * What a principal may see, as conditions over `event e` on `$1`, the
 * principal's id:
 * - an organiser: its own events;
 * - a venue: events at one of its locations that are `public`, or
 *   `unlisted` when owned by a placeholder organiser or by none; never a
 *   draft (a null visibility is a draft).
 * No other principal type sees events; the route refuses them before this,
 * and `false` keeps it so (`$1` still named, so every statement takes the same values).
 */
const VISIBLE_TO: Record<PrincipalType, string[]> = {
  organiser: ['e.organizer_id = $1'],
  // One statement spans Events, Venues and Identity here: the owners export the fragments.
  venue: [
    `e.location_id IN (${locationIdsOfVenueSql('$1')})`,
    `(e.visibility = 'public' OR (e.visibility = 'unlisted' AND (e.organizer_id IS NULL OR ${isPlaceholderOrganiserSql('e.organizer_id')})))`,
  ],
  professional: ['e.organizer_id = $1', 'false'],
};

/** The statements of every hot read, built once per principal type. */
const READS = Object.fromEntries(
  (Object.keys(VISIBLE_TO) as PrincipalType[]).map((type) => [
    type,
    {
      list: prepareKeysetList({
        select: EVENT_RESPONSE_COLUMNS('e'),
        from: 'event e',
        idColumn: 'e.id',
        where: [...VISIBLE_TO[type], 'e.start_time IS NOT NULL'],
        anchorTable: 'event',
        orderings: {
          default: { name: 'events:start_time_desc', column: 'e.start_time', direction: 'DESC' },
          updatedAfter: { name: 'events:updated_at_asc', column: 'e.updated_at', direction: 'ASC' },
        },
      }),
      byId: preparedStatement(
        `SELECT ${EVENT_RESPONSE_COLUMNS('e')} FROM event e WHERE ${[...VISIBLE_TO[type], 'e.id = $2'].join(' AND ')}`,
      ),
    },
  ]),
) as Record<PrincipalType, { list: PreparedKeysetList; byId: PreparedStatement }>;

/** All SQL and ORM work on `event`: the service holds the rules, this class the persistence. */
@Injectable()
export class EventRepository {
  /** Whole-row statements of the writes (PATCH, POST, publish), built once from the entity's metadata. */
  private readonly rows: EntityStatements<EventEntity>;
  private readonly lockById: PreparedStatement;
  private readonly lockOwned: PreparedStatement;

  constructor(
    private readonly dataSource: DataSource,
    private readonly pager: KeysetPager,
    private readonly statements: SqlStatements,
  ) {
    this.rows = new EntityStatements(dataSource, EventEntity);
    this.lockById = this.rows.select('WHERE id = $1 FOR UPDATE');
    this.lockOwned = this.rows.select('WHERE id = $1 AND organizer_id = $2 FOR UPDATE');
  }

  /** One page of the events a principal sees; events without a startTime never appear. */
  async pageVisibleTo(principal: Principal, request: PageRequest): Promise<Page<EventResponseRow>> {
    return this.pager.pageOf(READS[principal.type].list, [principal.id], request, (row: EventResponseRow) => row);
  }

  async findVisible(
    principal: Principal,
    eventId: string,
    db: StatementTarget = this.dataSource,
  ): Promise<EventResponseRow | null> {
    const rows = await this.statements.rows<EventResponseRow>(READS[principal.type].byId, [principal.id, eventId], db);
    return rows[0] ?? null;
  }

  /** The stored event, row-locked until the transaction ends; `organizerId` scopes it to one owner. */
  async lockForWrite(eventId: string, manager: EntityManager, organizerId?: string): Promise<EventEntity | null> {
    const rows = await this.statements.rows(
      organizerId === undefined ? this.lockById : this.lockOwned,
      organizerId === undefined ? [eventId] : [eventId, organizerId],
      manager,
    );
    return rows[0] === undefined ? null : this.rows.hydrate(rows[0]);
  }

  async insert(entity: EventEntity, manager: EntityManager): Promise<void> {
    await this.statements.affected(this.rows.insert, this.rows.insertValues(entity), manager);
  }

  /** Writes back the columns that changed since lockForWrite read the row (whose lock it still holds). */
  async save(entity: EventEntity, manager: EntityManager): Promise<void> {
    const update = this.rows.updateOf(entity);
    if (update !== null) await this.statements.affected(update.statement, update.values, manager);
  }

  /** A write that moves only `updatedAt`. */
  async touch(eventId: string, updatedAt: Date, manager: EntityManager): Promise<void> {
    await manager.getRepository(EventEntity).update({ id: eventId }, { updatedAt });
  }

  /** Hard delete; false when there was no such event. */
  async delete(eventId: string, manager: EntityManager): Promise<boolean> {
    const result = await manager.getRepository(EventEntity).delete({ id: eventId });
    return (result.affected ?? 0) > 0;
  }

  /** The event's organiser (null for none); null when there is no such event. `share` locks the row. */
  async findOwner(
    eventId: string,
    db: EntityManager | DataSource = this.dataSource,
    lock?: 'share',
  ): Promise<{ organizerId: string | null } | null> {
    const rows: Array<{ organizer_id: string | null }> = await db.query(
      `SELECT organizer_id FROM event WHERE id = $1${lock === 'share' ? ' FOR SHARE' : ''}`,
      [eventId],
    );
    const row = rows[0];
    return row === undefined ? null : { organizerId: row.organizer_id };
  }

  /** Any event by id, for internal callers and post-write reads. */
  async findById(
    eventId: string,
    db: EntityManager | DataSource = this.dataSource,
  ): Promise<(EventResponseRow & { organizer_id: string | null }) | null> {
    const rows: Array<EventResponseRow & { organizer_id: string | null }> = await db.query(
      `SELECT ${EVENT_RESPONSE_COLUMNS('e')}, e.organizer_id FROM event e WHERE e.id = $1`,
      [eventId],
    );
    return rows[0] ?? null;
  }
}
