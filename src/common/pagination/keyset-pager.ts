import { Injectable, OnModuleInit } from '@nestjs/common';
import type { QueryResultRow } from 'pg';
import { CursorCodec } from '../../../libs/cursor/cursor-codec';
import { parseInstant } from '../../../libs/time/instant';
import { ServiceSettings } from '../../database/service-settings';
import { isoTimestamp } from '../../database/sql/sql-columns';
import {
  joinSql,
  parameterReferences,
  sql,
  SqlParameter,
  sqlText,
  type SqlFragment,
  type SqlParameters,
} from '../../database/sql/sql-fragment';
import { defineStatement, type SqlStatement } from '../../database/sql/sql-statement';
import { Database, type SqlTarget } from '../../database/sql/sql-target';
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

/**
 * The values the pager appends to a list's own parameters, by name: the
 * `updated_after` instant, the cursor's position and id (the id of the anchor
 * row too), and `limit + 1`. A variant that does not use one is given null.
 */
export interface PagerValues {
  pageUpdatedAfter: string | null;
  pagePosition: string | null;
  pageAfterId: string | null;
  pageLimit: number;
}

const PAGER_VALUE_NAMES: ReadonlyArray<keyof PagerValues> = [
  'pageUpdatedAfter',
  'pagePosition',
  'pageAfterId',
  'pageLimit',
];

/** A list's SQL shape, without values: compiled once into its statements by defineKeysetList. */
export interface KeysetListShape<Params extends object> {
  /** The response columns (a view's `select`; no entity hydration on reads). */
  select: SqlFragment;
  /** FROM clause including joins, e.g. `event e`. */
  from: string;
  /** SQL expression of the row id, e.g. `e.id`. */
  idColumn: string;
  /** Conditions (ANDed) that define the visible set, over the list's own named parameters. */
  where: (p: SqlParameters<Params>) => SqlFragment[];
  /** Table whose row a cursor anchors to; a cursor whose row is gone is refused. */
  anchorTable: string;
  /** Ordering without `updated_after`, and the one `updated_after` switches to. */
  orderings: { default: Ordering; updatedAfter: Ordering };
  /** Named prepared statements for a list on a hot path (see StatementOptions). */
  prepared: boolean;
}

/** What the pager adds to every row it reads: the row's id and its ordering position, for the next cursor. */
interface PositionColumns {
  __id: string | null;
  __position: string;
  __anchor_exists?: boolean;
}

interface PageStatement<Params extends object, Row extends QueryResultRow> {
  ordering: Ordering;
  statement: SqlStatement<Params & PagerValues, Row & PositionColumns>;
}

/**
 * The four statements of one list (default or `updated_after` ordering, first
 * page or after a cursor), compiled once by defineKeysetList.
 */
export interface KeysetList<Params extends object, Row extends QueryResultRow> {
  readonly first: { default: PageStatement<Params, Row>; updatedAfter: PageStatement<Params, Row> };
  readonly afterCursor: { default: PageStatement<Params, Row>; updatedAfter: PageStatement<Params, Row> };
}

function pageStatement<Params extends object, Row extends QueryResultRow>(
  list: KeysetListShape<Params>,
  updatedAfter: boolean,
  cursor: boolean,
): PageStatement<Params, Row> {
  const ordering = updatedAfter ? list.orderings.updatedAfter : list.orderings.default;
  const statement = defineStatement<Params & PagerValues, Row & PositionColumns>(
    (p) => {
      const where = [...list.where(p)];
      if (updatedAfter)
        where.push(sql`${sqlText(list.orderings.updatedAfter.column)} >= ${p.pageUpdatedAfter}::timestamptz`);
      if (cursor) {
        const comparison = ordering.direction === 'DESC' ? '<' : '>';
        where.push(
          sql`(${sqlText(`${ordering.column}, ${list.idColumn}`)}) ${sqlText(comparison)} (${p.pagePosition}::timestamptz, ${p.pageAfterId})`,
        );
      }
      const order = `${ordering.column} ${ordering.direction}, ${list.idColumn} ${ordering.direction}`;
      const page = sql`SELECT ${list.select}, ${sqlText(`${list.idColumn} AS "__id"`)}, ${isoTimestamp(ordering.column)} AS "__position" FROM ${sqlText(list.from)} ${where.length > 0 ? sql`WHERE ${joinSql(where, ' AND ')}` : sqlText('')} ORDER BY ${sqlText(order)} LIMIT ${p.pageLimit}`;
      if (!cursor) return page;
      // The anchor check and the page in one statement: the outer row always
      // exists, and carries whether the anchor row is still there.
      return sql`SELECT a.__anchor_exists, p.* FROM (SELECT EXISTS (SELECT 1 FROM ${sqlText(list.anchorTable)} WHERE id = ${p.pageAfterId}) AS __anchor_exists) a LEFT JOIN LATERAL (${page}) p ON a.__anchor_exists`;
    },
    { prepared: list.prepared },
  );
  return { ordering, statement };
}

/**
 * Compiles a list's statements. Call it once per list, for a module-level
 * constant beside the repository, never per request. The list's own
 * parameters must not use the pager's names (PagerValues).
 */
export function defineKeysetList<Params extends object, Row extends QueryResultRow>(
  list: KeysetListShape<Params>,
): KeysetList<Params, Row> {
  for (const fragment of list.where(parameterReferences<Params>())) {
    for (const part of fragment.parts) {
      if (part instanceof SqlParameter && (PAGER_VALUE_NAMES as readonly string[]).includes(part.name)) {
        throw new Error(`the list parameter ${part.name} has the name of one the pager appends`);
      }
    }
  }
  return {
    first: {
      default: pageStatement(list, false, false),
      updatedAfter: pageStatement(list, true, false),
    },
    afterCursor: {
      default: pageStatement(list, false, true),
      updatedAfter: pageStatement(list, true, true),
    },
  };
}

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
    private readonly database: Database,
  ) {}

  async onModuleInit(): Promise<void> {
    this.codec = new CursorCodec(Buffer.from(await this.settings.cursorSigningKey(), 'hex'));
  }

  /** A page of a list compiled once with defineKeysetList: one statement, one round trip. */
  async page<Params extends object, Row extends QueryResultRow>(
    list: KeysetList<Params, Row>,
    params: Params,
    request: PageRequest,
    target: SqlTarget = this.database,
  ): Promise<Page<Row>> {
    const variants = request.cursor === null ? list.first : list.afterCursor;
    const { ordering, statement } = request.updatedAfter === null ? variants.default : variants.updatedAfter;
    // The list a cursor belongs to: these rows for this caller (an event's orders, an account's events).
    const listName = JSON.stringify(params);
    const anchor = request.cursor === null ? null : this.decode(request.cursor, ordering, listName);
    const values: Params & PagerValues = {
      ...params,
      pageUpdatedAfter: request.updatedAfter === null ? null : request.updatedAfter.toISOString(),
      pagePosition: anchor?.value ?? null,
      pageAfterId: anchor?.id ?? null,
      pageLimit: request.limit + 1,
    };
    const read = await statement.rows(values, target);
    if (anchor !== null && read[0]?.__anchor_exists !== true) {
      throw new DomainError(ErrorCode.InvalidCursor, 'The cursor points at a row that no longer exists.');
    }
    const rows = anchor === null ? read : read.filter((row) => row.__id !== null);

    const hasMore = rows.length > request.limit;
    const shown = hasMore ? rows.slice(0, request.limit) : rows;
    const last = shown[shown.length - 1];
    const nextCursor =
      hasMore && last !== undefined && last.__id !== null
        ? this.codec.encode({ ordering: ordering.name, value: last.__position, id: last.__id }, listName)
        : null;
    // The rows keep the pager's own columns (`__id`, `__position`): presenters read only the view's.
    return new Page<Row>(shown, hasMore, nextCursor);
  }

  private decode(cursor: string, ordering: Ordering, listName: string): { value: string; id: string } {
    // A cursor signed for no list is one an earlier build made (before cursors named their list): still
    // honoured, so a client paging across an upgrade goes on; every cursor made now names its list.
    const position = this.codec.decode(cursor, listName) ?? this.codec.decode(cursor);
    if (position === null) {
      throw new DomainError(
        ErrorCode.InvalidCursor,
        'The cursor is malformed, or belongs to another list (another event’s orders, another account’s events).',
      );
    }
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
