import { Injectable, OnModuleInit } from '@nestjs/common';
import { CursorCodec } from '../../../libs/cursor/cursor-codec';
import { parseInstant } from '../../../libs/time/instant';
import { isoTimestampSql } from '../../database/iso-timestamp-sql';
import { ServiceSettings } from '../../database/service-settings';
import { Page } from '../envelope/page';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { preparedStatement, type PreparedStatement } from '../persistence/prepared-statement';
import { SqlStatements, type StatementTarget } from '../persistence/sql-statements';
import type { PageRequest } from './page-request';

/** One ordering of one list: a timestamp column, with the row id as tie-breaker. */
export interface Ordering {
  /** Stable name written into cursors, e.g. `events:start_time_desc`. */
  name: string;
  /** SQL expression of a `timestamptz(3)` column, e.g. `e.start_time`. */
  column: string;
  direction: 'ASC' | 'DESC';
}

/** A list's SQL shape, without values: compiled once into prepared statements (see prepareKeysetList). */
export interface KeysetList {
  /** Select list of response columns (hand-written; no entity hydration on reads). */
  select: string;
  /** FROM clause including joins, e.g. `event e`. */
  from: string;
  /** SQL expression of the row id, e.g. `e.id`. */
  idColumn: string;
  /** Conditions (ANDed) that define the visible set; they use $1..$n, n being the number of params. */
  where: string[];
  /** Table whose row a cursor anchors to; a cursor whose row is gone is refused. */
  anchorTable: string;
  /** Ordering without `updated_after`, and the one `updated_after` switches to. */
  orderings: { default: Ordering; updatedAfter: Ordering };
}

export interface KeysetQuery extends KeysetList {
  params: unknown[];
}

interface PageStatement {
  ordering: Ordering;
  statement: PreparedStatement;
}

/**
 * The four statements of one list (default or `updated_after` ordering, first
 * page or after a cursor), built once. Values are appended after the list's
 * own `$1..$n` in this order: `updated_after`, the cursor's position and id,
 * `limit + 1`, then the anchor id.
 */
export interface PreparedKeysetList {
  readonly paramCount: number;
  readonly first: { default: PageStatement; updatedAfter: PageStatement };
  readonly afterCursor: { default: PageStatement; updatedAfter: PageStatement };
}

function highestPlaceholder(where: string[]): number {
  let highest = 0;
  for (const match of where.join(' ').matchAll(/\$(\d+)/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}

function pageStatement(list: KeysetList, paramCount: number, updatedAfter: boolean, cursor: boolean): PageStatement {
  const ordering = updatedAfter ? list.orderings.updatedAfter : list.orderings.default;
  let count = paramCount;
  const next = (): string => `$${(count += 1)}`;
  const where = [...list.where];
  if (updatedAfter) where.push(`${list.orderings.updatedAfter.column} >= ${next()}::timestamptz`);
  if (cursor) {
    const comparison = ordering.direction === 'DESC' ? '<' : '>';
    where.push(`(${ordering.column}, ${list.idColumn}) ${comparison} (${next()}::timestamptz, ${next()})`);
  }
  const limitParam = next();
  const pageSql =
    `SELECT ${list.select}, ${list.idColumn} AS "__id", ` +
    `${isoTimestampSql(ordering.column)} AS "__position" ` +
    `FROM ${list.from} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ` +
    `ORDER BY ${ordering.column} ${ordering.direction}, ${list.idColumn} ${ordering.direction} ` +
    `LIMIT ${limitParam}`;
  if (!cursor) return { ordering, statement: preparedStatement(pageSql) };
  // The anchor check and the page in one statement: the outer row always
  // exists, and carries whether the anchor row is still there.
  const anchorParam = next();
  return {
    ordering,
    statement: preparedStatement(
      `SELECT a.__anchor_exists, p.* FROM ` +
        `(SELECT EXISTS (SELECT 1 FROM ${list.anchorTable} WHERE id = ${anchorParam}) AS __anchor_exists) a ` +
        `LEFT JOIN LATERAL (${pageSql}) p ON a.__anchor_exists`,
    ),
  };
}

/** Compiles a list's statements; call it once per list (at module load or in a constructor), not per request. */
export function prepareKeysetList(list: KeysetList): PreparedKeysetList {
  const paramCount = highestPlaceholder(list.where);
  return {
    paramCount,
    first: {
      default: pageStatement(list, paramCount, false, false),
      updatedAfter: pageStatement(list, paramCount, true, false),
    },
    afterCursor: {
      default: pageStatement(list, paramCount, false, true),
      updatedAfter: pageStatement(list, paramCount, true, true),
    },
  };
}

/**
 * Keyset pagination for every list (never OFFSET, so page 1,000 costs what
 * page 1 costs). It reads `limit + 1` rows and reports `has_more` from what
 * it saw. With a cursor, the anchor-row check rides in the same statement,
 * so a page is one round trip, of a statement PostgreSQL has already prepared.
 */
@Injectable()
export class KeysetPager implements OnModuleInit {
  private codec!: CursorCodec;

  constructor(
    private readonly settings: ServiceSettings,
    private readonly statements: SqlStatements,
  ) {}

  async onModuleInit(): Promise<void> {
    this.codec = new CursorCodec(Buffer.from(await this.settings.cursorSigningKey(), 'hex'));
  }

  /** A page of a list given as SQL (lists read rarely, e.g. the dashboard's); compiled on each call. */
  async page<Row, Item>(
    query: KeysetQuery,
    request: PageRequest,
    toItem: (row: Row) => Item,
    db?: StatementTarget,
  ): Promise<Page<Item>> {
    return this.pageOf(prepareKeysetList(query), query.params, request, toItem, db);
  }

  /** A page of a list compiled once with prepareKeysetList: one prepared statement, one round trip. */
  async pageOf<Row, Item>(
    list: PreparedKeysetList,
    params: unknown[],
    request: PageRequest,
    toItem: (row: Row) => Item,
    db?: StatementTarget,
  ): Promise<Page<Item>> {
    if (params.length !== list.paramCount) throw new Error('the list was given the wrong number of values');
    const variants = request.cursor === null ? list.first : list.afterCursor;
    const { ordering, statement } = request.updatedAfter === null ? variants.default : variants.updatedAfter;
    const values = [...params];
    if (request.updatedAfter !== null) values.push(request.updatedAfter.toISOString());
    const anchor = request.cursor === null ? null : this.decode(request.cursor, ordering);
    if (anchor !== null) values.push(anchor.value, anchor.id);
    values.push(request.limit + 1);

    let rows: Array<Row & { __id: string; __position: string }>;
    if (anchor === null) {
      rows = await this.statements.rows(statement, values, db);
    } else {
      values.push(anchor.id);
      const combined = await this.statements.rows<
        Row & { __id: string | null; __position: string; __anchor_exists: boolean }
      >(statement, values, db);
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
