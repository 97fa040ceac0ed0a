import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../common/auth-context/access';
import type { KeysetQuery } from '../common/pagination/keyset-pager';
import { isPlaceholderOrganiserSql } from '../identity/placeholder-organisers.sql-fragment';
import { locationIdsOfVenueSql } from '../venues/venue-location.sql-fragment';
import { EVENT_RESPONSE_COLUMNS, type EventResponseRow } from './event-presenter';

/**
 * What a principal may see, as SQL over `event e` (params start at $1):
 * - an organiser: its own events;
 * - a venue: events at one of its locations that are `public`, or
 *   `unlisted` when owned by a placeholder organiser or by none; never a
 *   draft (a null visibility is a draft).
 */
function visibleTo(principal: Principal): { from: string; where: string[]; params: unknown[] } {
  if (principal.type === 'organiser') {
    return { from: 'event e', where: ['e.organizer_id = $1'], params: [principal.id] };
  }
  if (principal.type === 'venue') {
    // One statement spans Events, Venues and Identity here: the owners export the fragments.
    return {
      from: 'event e',
      where: [
        `e.location_id IN (${locationIdsOfVenueSql('$1')})`,
        `(e.visibility = 'public' OR (e.visibility = 'unlisted' AND (e.organizer_id IS NULL OR ${isPlaceholderOrganiserSql('e.organizer_id')})))`,
      ],
      params: [principal.id],
    };
  }
  // No other principal type sees events; the route refuses them before this, and this keeps it so.
  return { from: 'event e', where: ['false'], params: [] };
}

@Injectable()
export class EventRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The list query for a principal; events without a startTime never appear. */
  listQuery(principal: Principal): KeysetQuery {
    const visible = visibleTo(principal);
    return {
      select: EVENT_RESPONSE_COLUMNS('e'),
      from: visible.from,
      idColumn: 'e.id',
      where: [...visible.where, 'e.start_time IS NOT NULL'],
      params: visible.params,
      anchorTable: 'event',
      orderings: {
        default: { name: 'events:start_time_desc', column: 'e.start_time', direction: 'DESC' },
        updatedAfter: { name: 'events:updated_at_asc', column: 'e.updated_at', direction: 'ASC' },
      },
    };
  }

  async findVisible(
    principal: Principal,
    eventId: string,
    db: EntityManager | DataSource = this.dataSource,
  ): Promise<EventResponseRow | null> {
    const visible = visibleTo(principal);
    const rows: EventResponseRow[] = await db.query(
      `SELECT ${EVENT_RESPONSE_COLUMNS('e')} FROM ${visible.from} WHERE ${[...visible.where, `e.id = $${visible.params.length + 1}`].join(' AND ')}`,
      [...visible.params, eventId],
    );
    return rows[0] ?? null;
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
