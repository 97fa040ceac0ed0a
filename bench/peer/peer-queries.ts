import type { Pool, PoolClient } from 'pg';
import { CursorCodec } from '../../libs/cursor/cursor-codec';
import { flattenLocalisedText } from '../../libs/locale/localised-text';

/**
 * The SQL of the frameworkless peer: the same statements the service sends
 * (columns, visible set, keyset conditions, the anchor check riding in the
 * page statement), as named prepared statements, for an organiser key.
 */
export class PeerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface PeerEvent {
  id: string;
  title: string | null;
  visibility: string;
  startTime: string | null;
  endTime: string | null;
  updatedAt: string;
  url: string;
}

// Timestamps are selected as they are: the pool's type parser turns their text into ISO strings (src/database/sql/timestamptz-text.ts).
export const EVENT_COLUMNS = `e.id, e.title, e.visibility, e.start_time, e.end_time, e.updated_at`;
const CURRENCY = `COALESCE(NULLIF(upper(btrim(o.currency)), ''), 'EUR')`;
const ORDER_COLUMNS = `o.id, o.event_id AS "eventId", o.status, o.is_rsvp AS "isRsvp", o.quantity, o.total_amount_minor AS "totalAmountMinor", ${CURRENCY} AS currency, o.billing_name AS "billingName", o.billing_email AS "billingEmail", o.attribution_source AS "attributionSource", o.created_at AS "createdAt", o.updated_at AS "updatedAt"`;

interface ListDefinition {
  select: string;
  from: string;
  where: string;
  anchorTable: string;
  orderings: Record<'default' | 'updatedAfter', { name: string; column: string; direction: 'ASC' | 'DESC' }>;
  /**
   * The list a cursor is signed for, as the service names it: its list's
   * parameters as JSON (see KeysetPager in src/common/pagination), so that
   * both hand out the same cursors.
   */
  cursorList(organiserId: string): string;
  toItem(row: Record<string, unknown>): unknown;
}

export type ListName = 'events' | 'orders';

export interface PageQuery {
  limit: number;
  cursor: string | null;
  updatedAfter: Date | null;
}

interface ActiveKeyRow {
  principal_type: string;
  principal_id: string;
  scopes: string[];
}

const KEY_CACHE_MS = 1_000;
const KEY_CACHE_ENTRIES = 10_000;

export class PeerQueries {
  private readonly lists: Record<ListName, ListDefinition>;
  private readonly keys = new Map<string, { key: ActiveKeyRow; until: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly codec: CursorCodec,
    private readonly publicWebUrl: string,
  ) {
    this.lists = {
      events: {
        select: EVENT_COLUMNS,
        from: 'event e',
        where: 'e.organizer_id = $1 AND e.start_time IS NOT NULL',
        anchorTable: 'event',
        orderings: {
          default: { name: 'events:start_time_desc', column: 'e.start_time', direction: 'DESC' },
          updatedAfter: { name: 'events:updated_at_asc', column: 'e.updated_at', direction: 'ASC' },
        },
        cursorList: (organiserId) => JSON.stringify({ principalId: organiserId }),
        toItem: (row) => this.event(row),
      },
      orders: {
        select: ORDER_COLUMNS,
        from: '"order" o',
        where: `o.organizer_id = $1 AND o.status = 'confirmed'`,
        anchorTable: '"order"',
        orderings: {
          default: { name: 'orders:created_at_desc', column: 'o.created_at', direction: 'DESC' },
          updatedAfter: { name: 'orders:updated_at_asc', column: 'o.updated_at', direction: 'ASC' },
        },
        cursorList: (organiserId) => JSON.stringify({ organizerId: organiserId }),
        toItem: (row) => ({
          ...row,
          quantity: Number(row['quantity']),
          totalAmountMinor: Number(row['totalAmountMinor']),
        }),
      },
    };
  }

  /**
   * The service caches key lookups (revocations reach it through
   * LISTEN/NOTIFY, and it trusts its cache for at most 1 s without them), so
   * the peer keeps found keys for 1 s: the same staleness bound, without the
   * listener. Reading the key on every request would be work the contract does
   * not ask of the peer, and would flatter the service's PostgreSQL ratios.
   */
  async activeKey(keyHash: string): Promise<ActiveKeyRow | null> {
    const now = Date.now();
    const cached = this.keys.get(keyHash);
    if (cached !== undefined && cached.until > now) return cached.key;
    const key = await this.readKey(keyHash);
    if (key === null) this.keys.delete(keyHash);
    else {
      if (this.keys.size >= KEY_CACHE_ENTRIES) this.keys.clear();
      this.keys.set(keyHash, { key, until: now + KEY_CACHE_MS });
    }
    return key;
  }

  private async readKey(keyHash: string): Promise<ActiveKeyRow | null> {
    const { rows } = await this.pool.query({
      name: 'peer-key',
      text: `SELECT id, principal_type, principal_id, scopes, key_prefix FROM api_key WHERE key_hash = $1 AND revoked_at IS NULL`,
      values: [keyHash],
    });
    return rows[0] ?? null;
  }

  event(row: Record<string, unknown>): PeerEvent {
    return {
      id: row['id'] as string,
      title: flattenLocalisedText(row['title'] as Record<string, string> | null),
      visibility: (row['visibility'] as string | null) ?? 'draft',
      startTime: row['start_time'] as string | null,
      endTime: row['end_time'] as string | null,
      updatedAt: row['updated_at'] as string,
      url: `${this.publicWebUrl}/events/${encodeURIComponent(row['id'] as string)}`,
    };
  }

  async eventOf(organiserId: string, eventId: string): Promise<PeerEvent | null> {
    const { rows } = await this.pool.query({
      name: 'peer-event',
      text: `SELECT ${EVENT_COLUMNS} FROM event e WHERE e.organizer_id = $1 AND e.id = $2`,
      values: [organiserId, eventId],
    });
    return rows[0] === undefined ? null : this.event(rows[0]);
  }

  /** One page, `limit + 1` rows read; with a cursor, the anchor row's existence is checked in the same statement. */
  async page(list: ListName, organiserId: string, request: PageQuery): Promise<object> {
    const definition = this.lists[list];
    const ordering = request.updatedAfter === null ? definition.orderings.default : definition.orderings.updatedAfter;
    const alias = definition.from.split(' ')[1];
    const values: unknown[] = [organiserId];
    let where = definition.where;
    if (request.updatedAfter !== null) {
      values.push(request.updatedAfter.toISOString());
      where += ` AND ${ordering.column} >= $${values.length}::timestamptz`;
    }
    const cursorList = definition.cursorList(organiserId);
    const anchor = request.cursor === null ? null : this.codec.decode(request.cursor, cursorList);
    if (request.cursor !== null && (anchor === null || anchor.ordering !== ordering.name)) {
      throw new PeerError(400, 'invalid_cursor', 'The cursor is malformed or belongs to another list.');
    }
    if (anchor !== null) {
      values.push(anchor.value, anchor.id);
      where += ` AND (${ordering.column}, ${alias}.id) ${ordering.direction === 'DESC' ? '<' : '>'} ($${values.length - 1}::timestamptz, $${values.length})`;
    }
    values.push(request.limit + 1);
    let text =
      `SELECT ${definition.select}, ${alias}.id AS "__id", ${ordering.column} AS "__position" ` +
      `FROM ${definition.from} WHERE ${where} ` +
      `ORDER BY ${ordering.column} ${ordering.direction}, ${alias}.id ${ordering.direction} LIMIT $${values.length}`;
    if (anchor !== null) {
      values.push(anchor.id);
      text =
        `SELECT a.__anchor_exists, p.* FROM (SELECT EXISTS (SELECT 1 FROM ${definition.anchorTable} WHERE id = $${values.length}) AS __anchor_exists) a ` +
        `LEFT JOIN LATERAL (${text}) p ON a.__anchor_exists`;
    }
    const name = `peer-${list}-${ordering.name}-${anchor === null ? 'first' : 'cursor'}`;
    let { rows } = await this.pool.query({ name, text, values });
    if (anchor !== null) {
      if (rows[0]?.__anchor_exists !== true) {
        throw new PeerError(400, 'invalid_cursor', 'The cursor points at a row that no longer exists.');
      }
      rows = rows.filter((row) => row.__id !== null);
    }
    const hasMore = rows.length > request.limit;
    const shown = hasMore ? rows.slice(0, request.limit) : rows;
    const last = shown[shown.length - 1];
    const data = shown.map(({ __id, __position, __anchor_exists, ...row }) => definition.toItem(row));
    const next = hasMore
      ? this.codec.encode({ ordering: ordering.name, value: last.__position, id: last.__id }, cursorList)
      : null;
    return { data, has_more: hasMore, next_cursor: next };
  }

  /** Runs `work` in one transaction on one connection. */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
}
