import { isoTimestampSql } from '../iso-timestamp-sql';
import { joinSql, sqlText, type SqlFragment } from './sql-fragment';

/** One column of a view: the SQL expression that yields it and, in its type, the value pg hands back for it. */
export class ViewColumn<Value> {
  /** Type only: the value a row holds for this column. */
  declare readonly value: Value;

  constructor(readonly expression: string) {}
}

/** An expression read as pg parses it (text, boolean, jsonb as an object, bigint as a string). */
export function column<Value>(expression: string): ViewColumn<Value> {
  return new ViewColumn<Value>(expression);
}

/** A `timestamptz` formatted as ISO 8601 UTC with milliseconds, in SQL (see isoTimestampSql). */
export function isoTime(expression: string): ViewColumn<string> {
  return new ViewColumn<string>(isoTimestampSql(expression));
}

/** A nullable `timestamptz`, formatted like `isoTime`; null stays null. */
export function isoTimeOrNull(expression: string): ViewColumn<string | null> {
  return new ViewColumn<string | null>(isoTimestampSql(expression));
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
    this.select = joinSql(
      entries.map(([name, spec]) => sqlText(`${spec.expression} AS "${name}"`)),
      ', ',
    );
    this.json = sqlText(
      `json_build_object(${entries.map(([name, spec]) => `'${name}', ${spec.expression}`).join(', ')})`,
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
