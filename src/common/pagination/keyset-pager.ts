import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CursorCodec } from '../../../libs/cursor/cursor-codec';
import { parseInstant } from '../../../libs/time/instant';
import { isoTimestampSql } from '../../database/iso-timestamp-sql';
import { ServiceSettings } from '../../database/service-settings';
import { Page } from '../envelope/page';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import type { PageRequest } from './page-request';

/** One ordering of one list: a timestamp column, with the row id as tie-breaker. */
export interface Ordering {
  /** Stable name written into cursors, e.g. `events:start_time_desc`. */
  name: string;
  /** SQL expression of a `timestamptz(3)` column, e.g. `e.start_time`. */
  column: string;
  direction: 'ASC' | 'DESC';
}

export interface KeysetQuery {
  /** Select list of response columns (hand-written; no entity hydration on reads). */
  select: string;
  /** FROM clause including joins, e.g. `event e`. */
  from: string;
  /** SQL expression of the row id, e.g. `e.id`. */
  idColumn: string;
  /** Conditions (ANDed) that define the visible set; they use $1..$n. */
  where: string[];
  params: unknown[];
  /** Table whose row a cursor anchors to; a cursor whose row is gone is refused. */
  anchorTable: string;
  /** Ordering without `updated_after`, and the one `updated_after` switches to. */
  orderings: { default: Ordering; updatedAfter: Ordering };
}

type Queryable = Pick<DataSource | EntityManager, 'query'>;

/**
 * Keyset pagination for every list (never OFFSET, so page 1,000 costs what
 * page 1 costs). It reads `limit + 1` rows and reports `has_more` from what
 * it saw. With a cursor, the anchor-row check rides in the same statement,
 * so a page is one round trip.
 */
@Injectable()
export class KeysetPager implements OnModuleInit {
  private codec!: CursorCodec;

  constructor(
    private readonly settings: ServiceSettings,
    private readonly dataSource: DataSource,
  ) {}

  async onModuleInit(): Promise<void> {
    this.codec = new CursorCodec(Buffer.from(await this.settings.cursorSigningKey(), 'hex'));
  }

  async page<Row, Item>(
    query: KeysetQuery,
    request: PageRequest,
    toItem: (row: Row) => Item,
    db: Queryable = this.dataSource,
  ): Promise<Page<Item>> {
    const ordering = request.updatedAfter === null ? query.orderings.default : query.orderings.updatedAfter;
    const params = [...query.params];
    const where = [...query.where];
    const next = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (request.updatedAfter !== null) {
      where.push(`${query.orderings.updatedAfter.column} >= ${next(request.updatedAfter.toISOString())}::timestamptz`);
    }
    const anchor = request.cursor === null ? null : this.decode(request.cursor, ordering);
    if (anchor !== null) {
      const comparison = ordering.direction === 'DESC' ? '<' : '>';
      where.push(
        `(${ordering.column}, ${query.idColumn}) ${comparison} (${next(anchor.value)}::timestamptz, ${next(anchor.id)})`,
      );
    }
    const limitParam = next(request.limit + 1);
    const pageSql =
      `SELECT ${query.select}, ${query.idColumn} AS "__id", ` +
      `${isoTimestampSql(ordering.column)} AS "__position" ` +
      `FROM ${query.from} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ` +
      `ORDER BY ${ordering.column} ${ordering.direction}, ${query.idColumn} ${ordering.direction} ` +
      `LIMIT ${limitParam}`;

    let rows: Array<Row & { __id: string; __position: string }>;
    if (anchor === null) {
      rows = await db.query(pageSql, params);
    } else {
      // The anchor check and the page in one statement: the outer row always
      // exists, and carries whether the anchor row is still there.
      const anchorParam = next(anchor.id);
      const combined: Array<Row & { __id: string | null; __position: string; __anchor_exists: boolean }> =
        await db.query(
          `SELECT a.__anchor_exists, p.* FROM ` +
            `(SELECT EXISTS (SELECT 1 FROM ${query.anchorTable} WHERE id = ${anchorParam}) AS __anchor_exists) a ` +
            `LEFT JOIN LATERAL (${pageSql}) p ON a.__anchor_exists`,
          params,
        );
      if (combined.length === 0 || combined[0]?.__anchor_exists !== true) {
        throw new DomainError(ErrorCode.InvalidCursor, 'The cursor points at a row that no longer exists.');
      }
      rows = combined.filter(
        (row): row is Row & { __id: string; __position: string; __anchor_exists: boolean } => row.__id !== null,
      );
    }

    const hasMore = rows.length > request.limit;
    const shown = hasMore ? rows.slice(0, request.limit) : rows;
    const last = shown[shown.length - 1];
    const nextCursor =
      hasMore && last !== undefined
        ? this.codec.encode({ ordering: ordering.name, value: last.__position, id: last.__id })
        : null;
    return new Page(shown.map(toItem), hasMore, nextCursor);
  }

  private decode(cursor: string, ordering: Ordering): { value: string; id: string } {
    const position = this.codec.decode(cursor);
    if (position === null) throw new DomainError(ErrorCode.InvalidCursor, 'The cursor is malformed.');
    if (position.ordering !== ordering.name) {
      throw new DomainError(
        ErrorCode.InvalidCursor,
        'The cursor belongs to a different list or ordering (was updated_after added or removed?).',
      );
    }
    if (parseInstant(position.value) === null)
      throw new DomainError(ErrorCode.InvalidCursor, 'The cursor is malformed.');
    return { value: position.value, id: position.id };
  }
}
