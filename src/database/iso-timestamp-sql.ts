/**
 * A `timestamptz` column formatted as ISO 8601 UTC with milliseconds, in SQL.
 * A SELECT list reads timestamps as they are stored and formats them in the
 * statement's type parser (sql/timestamptz-text.ts); this is for where no
 * type parser runs: inside a JSON value built by the database. Both give the
 * text `Date#toISOString` gives, so cursors and entity tags agree.
 */
export function isoTimestampSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
