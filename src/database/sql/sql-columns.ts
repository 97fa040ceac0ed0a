import { isoTimestampSql } from '../iso-timestamp-sql';
import { SqlFragment, sqlText } from './sql-fragment';

/** One column of a view: the SQL expression that yields it and, in its type, the value pg hands back for it. */
export class ViewColumn<Value> {
  /** Type only: the value a row holds for this column. */
  declare readonly value: Value;

  constructor(
    /** What a SELECT list reads. */
    readonly expression: string,
    /** What the view's `json_build_object` reads (a JSON value has no type parser, so timestamps are formatted in SQL). */
    readonly jsonExpression: string = expression,
    /** The column is a `timestamptz` read as an ISO string (see timestamptz-text.ts). */
    readonly isoTimestamp = false,
  ) {}
}

/** An expression read as pg parses it (text, boolean, jsonb as an object, bigint as a string). */
export function column<Value>(expression: string): ViewColumn<Value> {
  return new ViewColumn<Value>(expression);
}

/**
 * A `timestamptz` read as ISO 8601 UTC with milliseconds. The SELECT list
 * reads the column as it is stored and the statement's type parser turns
 * PostgreSQL's text into the ISO string (timestamptz-text.ts): cheaper in
 * total than `to_char` in the database or a Date in the service.
 */
export function isoTime(expression: string): ViewColumn<string> {
  return new ViewColumn<string>(expression, isoTimestampSql(expression), true);
}

/** A nullable `timestamptz`, read like `isoTime`; null stays null. */
export function isoTimeOrNull(expression: string): ViewColumn<string | null> {
  return new ViewColumn<string | null>(expression, isoTimestampSql(expression), true);
}

/** A `timestamptz` expression outside a view (e.g. a pager's position), read like `isoTime`. */
export function isoTimestamp(expression: string): SqlFragment {
  return new SqlFragment([expression], true);
}

type ColumnSpecs = Record<string, ViewColumn<unknown>>;

/** The row type a set of columns yields: one camelCase member per column. */
export type ViewOf<Columns extends ColumnSpecs> = { [Name in keyof Columns]: Columns[Name]['value'] };

/**
 * A resource's columns, declared once beside its SQL: the SELECT list of
 * every statement that reads (or RETURNs) the resource, and the camelCase
 * row type those statements yield (`typeof EVENT_VIEW.View`).
 */
export class ViewColumns<View> {
  /** Type only: the row every statement selecting `select` yields. */
  declare readonly View: View;
  /** `<expression> AS "<name>", …`, for a SELECT list or a RETURNING clause. */
  readonly select: SqlFragment;
  /** `json_build_object('<name>', <expression>, …)`: the whole view as one column, beside other columns. */
  readonly json: SqlFragment;
  readonly names: ReadonlyArray<keyof View & string>;

  constructor(columns: ColumnSpecs) {
    const entries = Object.entries(columns);
    for (const [name] of entries) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`a view column is named by an identifier: ${name}`);
    }
    this.names = entries.map(([name]) => name as keyof View & string);
    this.select = new SqlFragment(
      [entries.map(([name, spec]) => `${spec.expression} AS "${name}"`).join(', ')],
      entries.some(([, spec]) => spec.isoTimestamp),
    );
    this.json = sqlText(
      `json_build_object(${entries.map(([name, spec]) => `'${name}', ${spec.jsonExpression}`).join(', ')})`,
    );
  }
}

/**
 * Declares a view:
 *
 *     export const EVENT_VIEW = defineColumns({ id: column<string>('e.id'), updatedAt: isoTime('e.updated_at') });
 *     export type EventView = typeof EVENT_VIEW.View; // { id: string; updatedAt: string }
 */
export function defineColumns<Columns extends ColumnSpecs>(columns: Columns): ViewColumns<ViewOf<Columns>> {
  return new ViewColumns<ViewOf<Columns>>(columns);
}
