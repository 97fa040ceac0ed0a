/**
 * A `timestamptz` column formatted as ISO 8601 UTC with milliseconds, in SQL:
 * hot reads format timestamps once in the database instead of having pg build
 * Date objects that are only turned back into strings. The same text is what
 * `Date#toISOString` gives, so cursors and ETags agree with entity-based writes.
 */
export function isoTimestampSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
