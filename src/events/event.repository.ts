import { Injectable } from '@nestjs/common';
import type { Visibility } from '../../libs/event-rules';
import type { Principal, PrincipalType } from '../common/auth-context/access';
import type { Page } from '../common/envelope/page';
import { defineKeysetList, KeysetPager, type KeysetList } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { column, defineColumns, isoTime, isoTimeOrNull } from '../database/sql/sql-columns';
import { joinSql, sql, sqlText, type SqlFragment, type SqlParameters } from '../database/sql/sql-fragment';
import { defineStatement, type SqlStatement } from '../database/sql/sql-statement';
import { Database, type SqlTarget } from '../database/sql/sql-target';
import type { Transaction } from '../database/unit-of-work';
import { isPlaceholderOrganiserSql } from '../identity/placeholder-organisers.sql-fragment';
import { locationIdsOfVenueSql } from '../venues/venue-location.sql-fragment';
import { EventEntity } from './entities/event.entity';

/**
 * The public Event as every read and write yields it. Timestamps are selected
 * as stored and the statement's pg type parser makes them ISO strings
 * (timestamptz-text.ts); only `.json`, read under a lock, formats them in
 * SQL, to the same text.
 */
export const EVENT_VIEW = defineColumns({
  id: column<string>('e.id'),
  title: column<Record<string, string> | null>('e.title'),
  visibility: column<Visibility | null>('e.visibility'),
  startTime: isoTimeOrNull('e.start_time'),
  endTime: isoTimeOrNull('e.end_time'),
  updatedAt: isoTime('e.updated_at'),
});
export type EventView = typeof EVENT_VIEW.View;

/** What a write returns: the view, and the owner internal responses add to it. */
export type WrittenEvent = EventView & { organizerId: string | null };
const WRITTEN = sql`${EVENT_VIEW.select}, e.organizer_id AS "organizerId"`;

/**
 * The stored row, column by column, named after the entity's members (which
 * are named after the EventPatch fields). `satisfies` keeps it complete: a
 * member added to EventEntity does not compile until it has its column here.
 */
const RECORD_COLUMNS = {
  id: 'id',
  organizerId: 'organizer_id',
  visibility: 'visibility',
  title: 'title',
  description: 'description',
  startTime: 'start_time',
  endTime: 'end_time',
  dateOnly: 'date_only',
  locationId: 'location_id',
  additionalLocationIds: 'additional_location_ids',
  planning: 'planning',
  onlineMeeting: 'online_meeting',
  imageBlobName: 'image_blob_name',
  imageBlobNames: 'image_blob_names',
  tags: 'tags',
  subtags: 'subtags',
  languages: 'languages',
  metadata: 'metadata',
  themeColor: 'theme_color',
  secondaryThemeColor: 'secondary_theme_color',
  backgroundStyle: 'background_style',
  colorMode: 'color_mode',
  backgroundColor: 'background_color',
  headingFont: 'heading_font',
  titleFontScale: 'title_font_scale',
  backgroundPrimaryColor: 'background_primary_color',
  backgroundParams: 'background_params',
  plasmaPreset: 'plasma_preset',
  hideLocation: 'hide_location',
  hideRelatedEvents: 'hide_related_events',
  groupSizeOverride: 'group_size_override',
  seriesId: 'series_id',
  links: 'links',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  firstPublishedAt: 'first_published_at',
  venueId: 'venue_id',
  refundOffer: 'refund_offer',
} as const satisfies Record<keyof EventEntity, string>;

type RecordField = keyof typeof RECORD_COLUMNS;
const RECORD_FIELDS = Object.keys(RECORD_COLUMNS) as RecordField[];

/** The jsonb columns: sent as JSON text (pg would write a JS array as a PostgreSQL array). */
const JSON_FIELDS: ReadonlySet<RecordField> = new Set<RecordField>([
  'title',
  'description',
  'planning',
  'onlineMeeting',
  'metadata',
  'backgroundParams',
  'plasmaPreset',
  'groupSizeOverride',
  'links',
  'refundOffer',
]);

/** The values of a whole-row write, by field name. */
type RecordValues = Record<RecordField, unknown>;

function recordValues(event: EventEntity): RecordValues {
  const values = {} as RecordValues;
  for (const field of RECORD_FIELDS) {
    const value: unknown = event[field];
    values[field] =
      value === undefined || value === null ? null : JSON_FIELDS.has(field) ? JSON.stringify(value) : value;
  }
  return values;
}

const RECORD_SELECT = sqlText(RECORD_FIELDS.map((field) => `e.${RECORD_COLUMNS[field]} AS "${field}"`).join(', '));

/** The stored row and its view, as locked for a write. */
export type LockedEvent = { record: EventEntity; view: EventView };
type LockedRow = EventEntity & { view: EventView };

/**
 * What a principal may see, as conditions over `event e` on the principal's id:
 * - an organiser: its own events;
 * - a venue: events at one of its locations that are `public`, or
 *   `unlisted` when owned by a placeholder organiser or by none; never a
 *   draft (a null visibility is a draft).
 * No other principal type sees events; the route refuses them before this,
 * and `false` keeps it so.
 */
type Visible = (p: SqlParameters<{ principalId: string }>) => SqlFragment[];
const VISIBLE_TO: Record<PrincipalType, Visible> = {
  organiser: (p) => [sql`e.organizer_id = ${p.principalId}`],
  // One statement spans Events, Venues and Identity here: the owners export the fragments.
  venue: (p) => [
    sql`e.location_id IN (${locationIdsOfVenueSql(p.principalId)})`,
    sql`(e.visibility = 'public' OR (e.visibility = 'unlisted' AND (e.organizer_id IS NULL OR ${isPlaceholderOrganiserSql('e.organizer_id')})))`,
  ],
  professional: (p) => [sql`e.organizer_id = ${p.principalId}`, sqlText('false')],
};

interface PrincipalReads {
  list: KeysetList<{ principalId: string }, EventView>;
  byId: SqlStatement<{ principalId: string; eventId: string }, EventView>;
}

/** The statements of every hot read, compiled once per principal type. */
const READS = Object.fromEntries(
  (Object.keys(VISIBLE_TO) as PrincipalType[]).map((type): [PrincipalType, PrincipalReads] => [
    type,
    {
      list: defineKeysetList<{ principalId: string }, EventView>({
        select: EVENT_VIEW.select,
        from: 'event e',
        idColumn: 'e.id',
        where: (p) => [...VISIBLE_TO[type](p), sqlText('e.start_time IS NOT NULL')],
        anchorTable: 'event',
        orderings: {
          default: { name: 'events:start_time_desc', column: 'e.start_time', direction: 'DESC' },
          updatedAfter: { name: 'events:updated_at_asc', column: 'e.updated_at', direction: 'ASC' },
        },
        prepared: true,
      }),
      byId: defineStatement<{ principalId: string; eventId: string }, EventView>(
        (p) =>
          sql`SELECT ${EVENT_VIEW.select} FROM event e WHERE ${joinSql([...VISIBLE_TO[type](p), sql`e.id = ${p.eventId}`], ' AND ')}`,
        { prepared: true },
      ),
    },
  ]),
) as Record<PrincipalType, PrincipalReads>;

const LOCK_BY_ID = defineStatement<{ eventId: string }, LockedRow>(
  (p) => sql`SELECT ${RECORD_SELECT}, ${EVENT_VIEW.json} AS "view" FROM event e WHERE e.id = ${p.eventId} FOR UPDATE`,
  { prepared: true },
);
const LOCK_OWNED = defineStatement<{ eventId: string; organizerId: string }, LockedRow>(
  (p) => sql`SELECT ${RECORD_SELECT}, ${EVENT_VIEW.json} AS "view" FROM event e
              WHERE e.id = ${p.eventId} AND e.organizer_id = ${p.organizerId} FOR UPDATE`,
  { prepared: true },
);

const INSERT = defineStatement<RecordValues, WrittenEvent>(
  (p) =>
    sql`INSERT INTO event AS e (${sqlText(RECORD_FIELDS.map((field) => RECORD_COLUMNS[field]).join(', '))})
        VALUES (${joinSql(
          RECORD_FIELDS.map((field) => sql`${p[field]}`),
          ', ',
        )}) RETURNING ${WRITTEN}`,
  { prepared: true },
);

/** The whole row but its key and creation time; the row is locked, so no other writer's change is lost. */
const UPDATE = defineStatement<RecordValues, WrittenEvent>(
  (p) =>
    sql`UPDATE event e SET ${joinSql(
      RECORD_FIELDS.filter((field) => field !== 'id' && field !== 'createdAt').map(
        (field) => sql`${sqlText(RECORD_COLUMNS[field])} = ${p[field]}`,
      ),
      ', ',
    )} WHERE e.id = ${p.id} RETURNING ${WRITTEN}`,
  { prepared: true },
);

/**
 * Makes the event public, as one conditional update: it changes the row only
 * when it is not public yet or was never published, and reports whether it
 * set `first_published_at` (the old row is read through `before`).
 */
const PUBLISH = defineStatement<
  { eventId: string; updatedAt: Date },
  WrittenEvent & { locationId: string | null; firstPublication: boolean }
>(
  (p) => sql`UPDATE event e SET visibility = 'public', updated_at = ${p.updatedAt},
                    first_published_at = COALESCE(e.first_published_at, ${p.updatedAt})
               FROM event before
              WHERE e.id = ${p.eventId} AND before.id = e.id
                AND (e.visibility IS DISTINCT FROM 'public' OR e.first_published_at IS NULL)
          RETURNING ${WRITTEN}, e.location_id AS "locationId", before.first_published_at IS NULL AS "firstPublication"`,
  { prepared: false },
);

const TOUCH = defineStatement<{ eventId: string; updatedAt: Date }, WrittenEvent>(
  (p) => sql`UPDATE event e SET updated_at = ${p.updatedAt} WHERE e.id = ${p.eventId} RETURNING ${WRITTEN}`,
  { prepared: false },
);

const OWNER = defineStatement<{ eventId: string }, { organizerId: string | null }>(
  (p) => sql`SELECT organizer_id AS "organizerId" FROM event WHERE id = ${p.eventId}`,
  { prepared: false },
);
/** Share-locked: an owner change or a delete of the event waits for the caller's commit. */
const OWNER_SHARE_LOCKED = defineStatement<{ eventId: string }, { organizerId: string | null }>(
  (p) => sql`SELECT organizer_id AS "organizerId" FROM event WHERE id = ${p.eventId} FOR SHARE`,
  { prepared: true },
);

/** All SQL and ORM work on `event`: the service holds the rules, this class the persistence. */
@Injectable()
export class EventRepository {
  constructor(
    private readonly database: Database,
    private readonly pager: KeysetPager,
  ) {}

  /** One page of the events a principal sees; events without a startTime never appear. */
  async pageVisibleTo(principal: Principal, request: PageRequest): Promise<Page<EventView>> {
    return this.pager.page(READS[principal.type].list, { principalId: principal.id }, request);
  }

  async findVisible(principal: Principal, eventId: string): Promise<EventView | null> {
    return READS[principal.type].byId.one({ principalId: principal.id, eventId }, this.database);
  }

  /** The stored event and its view, row-locked until the transaction ends; `organizerId` scopes it to one owner. */
  async lockForWrite(eventId: string, tx: Transaction, organizerId?: string): Promise<LockedEvent | null> {
    const row =
      organizerId === undefined
        ? await LOCK_BY_ID.one({ eventId }, tx)
        : await LOCK_OWNED.one({ eventId, organizerId }, tx);
    if (row === null) return null;
    const { view, ...record } = row;
    return { record, view };
  }

  async insert(event: EventEntity, tx: Transaction): Promise<WrittenEvent> {
    return this.written(await INSERT.one(recordValues(event), tx));
  }

  /** Writes the event locked by lockForWrite back, whole. */
  async save(event: EventEntity, tx: Transaction): Promise<WrittenEvent> {
    return this.written(await UPDATE.one(recordValues(event), tx));
  }

  /**
   * Publishes the event (locked by lockForWrite); null when it was public and
   * published already. `firstPublication` is true for exactly one call per event.
   */
  async publish(
    eventId: string,
    updatedAt: Date,
    tx: Transaction,
  ): Promise<(WrittenEvent & { locationId: string | null; firstPublication: boolean }) | null> {
    return PUBLISH.one({ eventId, updatedAt }, tx);
  }

  /** A write that moves only `updatedAt`. */
  async touch(eventId: string, updatedAt: Date, tx: Transaction): Promise<WrittenEvent> {
    return this.written(await TOUCH.one({ eventId, updatedAt }, tx));
  }

  /** Hard delete; false when there was no such event. */
  async delete(eventId: string, tx: Transaction): Promise<boolean> {
    const result = await tx.manager.getRepository(EventEntity).delete({ id: eventId });
    return (result.affected ?? 0) > 0;
  }

  /** The event's organiser (null for none); null when there is no such event. */
  async findOwner(eventId: string, target: SqlTarget = this.database): Promise<{ organizerId: string | null } | null> {
    return OWNER.one({ eventId }, target);
  }

  /** As findOwner, with the row share-locked until `tx` ends. */
  async lockOwner(eventId: string, tx: Transaction): Promise<{ organizerId: string | null } | null> {
    return OWNER_SHARE_LOCKED.one({ eventId }, tx);
  }

  private written(row: WrittenEvent | null): WrittenEvent {
    // Only reached for a row this transaction holds: an INSERT or the UPDATE of a locked row returns it.
    if (row === null) throw new Error('the event written is not there');
    return row;
  }
}
