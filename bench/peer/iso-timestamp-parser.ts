/**
 * The lean way to send a `timestamptz` as ISO 8601: PostgreSQL writes its
 * text (`2026-11-27 05:59:41.12+00` in a UTC session) and this turns that
 * text into `2026-11-27T05:59:41.120Z` with string slicing, never building
 * a Date. Installed as pg's parser for type 1184 on a pool whose sessions
 * run in UTC, it spares the statement its `to_char` per timestamp.
 */
export const TIMESTAMPTZ_OID = 1184;

export function isoFromTimestamptzText(text: string): string {
  const offsetAt = Math.max(text.lastIndexOf('+'), text.lastIndexOf('-'));
  if (offsetAt < 19 || text.slice(offsetAt) !== '+00') {
    throw new Error(`a timestamptz from a session outside UTC, or not ISO: ${text}`);
  }
  const seconds = text.slice(11, 19);
  const fraction = offsetAt > 20 ? text.slice(20, offsetAt) : '';
  return `${text.slice(0, 10)}T${seconds}.${fraction.padEnd(3, '0').slice(0, 3)}Z`;
}
