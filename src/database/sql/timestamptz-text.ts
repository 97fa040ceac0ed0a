import type { CustomTypesConfig } from 'pg';
import { types as pgTypes } from 'pg';

/**
 * A `timestamptz` sent as ISO 8601 UTC with milliseconds, made from the text
 * PostgreSQL writes for it (`2026-11-27 05:59:41.12+00`) by string slicing:
 * no `to_char` per value in the database, and no Date per value in the
 * service. It gives exactly what `to_char(… AT TIME ZONE 'UTC',
 * 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` and `Date#toISOString` give (fractions
 * cut, not rounded, to milliseconds), so cursors and entity tags agree
 * whichever path formatted a timestamp.
 *
 * A session in UTC (PostgreSQL's default for a cluster made without a TZ)
 * takes the slicing path; any other session time zone still answers the
 * right instant, through the offset arithmetic below.
 */
export const TIMESTAMPTZ_OID = 1184;

export function isoFromTimestamptzText(text: string): string {
  // `YYYY-MM-DD HH:MM:SS[.ffffff]+00`: the only shape a UTC session writes for years 0001 to 9999.
  if (text.length >= 22 && text.charCodeAt(10) === 32 && text.endsWith('+00')) {
    const fraction = text.length > 23 ? text.slice(20, text.length - 3) : '';
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(3, '0').slice(0, 3)}Z`;
  }
  return isoFromOffsetText(text);
}

const WITH_OFFSET =
  /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?( BC)?$/;

function isoFromOffsetText(text: string): string {
  const match = WITH_OFFSET.exec(text);
  if (match === null) throw new Error(`not a timestamptz PostgreSQL writes in ISO DateStyle: ${text}`);
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh, om = '0', os = '0', bc] = match;
  const year = bc === undefined ? Number(y) : 1 - Number(y);
  const local = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps the years 0 to 99 where they are.
  local.setUTCFullYear(year, Number(mo) - 1, Number(d));
  local.setUTCHours(Number(h), Number(mi), Number(s), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (Number(oh) * 3600 + Number(om) * 60 + Number(os)) * 1000 * (sign === '-' ? -1 : 1);
  return new Date(local.getTime() - offsetMs).toISOString();
}

/**
 * pg's type parsers for a statement that reads a view: `timestamptz` as an
 * ISO string (above), every other type as pg parses it by default.
 */
export const ISO_TIMESTAMP_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) =>
    oid === TIMESTAMPTZ_OID
      ? isoFromTimestamptzText
      : (pgTypes.getTypeParser(oid, format ?? 'text') as (
          value: string,
        ) => unknown)) as CustomTypesConfig['getTypeParser'],
};
