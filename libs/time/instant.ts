/**
 * The one parser for timestamps in requests: an ISO 8601 string or epoch
 * milliseconds. In a JSON body the milliseconds are a number and a string is
 * ISO 8601 (parseInstant); where every value is text, a query string or an
 * HTML form, a string of digits is milliseconds (parseInstantText). Both
 * return null for anything they cannot read exactly; they never guess.
 *
 * Accepted ISO forms: `YYYY-MM-DD` (midnight UTC), and
 * `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z` or `±HH:MM`/`±HHMM`; without an
 * offset the time is taken as UTC. A space may stand for `T`; `t` and `z`
 * are read as `T` and `Z`, as RFC 3339 allows.
 */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Instants are limited to the years 0001 to 9999 (UTC): what ISO 8601's
 * four-digit years can write back, and well inside what PostgreSQL stores
 * (JavaScript reaches year 275760, PostgreSQL's timestamptz stops at 294276
 * but its text form and every client disagree past 9999).
 */
export const EARLIEST_INSTANT_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
export const LATEST_INSTANT_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** What becomes of an ISO fraction's digits past the millisecond. */
export type BeyondMilliseconds = 'dropped' | 'rounded up';

function fromEpochMs(value: number): Date | null {
  if (!Number.isFinite(value) || !Number.isInteger(value)) return null;
  if (value < EARLIEST_INSTANT_MS || value > LATEST_INSTANT_MS) return null;
  return new Date(value);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Date.UTC maps years 0 to 99 onto the 1900s; setUTCFullYear does not. */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

function fromIso(value: string, beyondMs: BeyondMilliseconds = 'dropped'): Date | null {
  const match = ISO_8601.exec(value);
  if (match === null) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', offset = 'Z'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const roundedUp = beyondMs === 'rounded up' && /[1-9]/.test(fraction.slice(3));
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3)) + (roundedUp ? 1 : 0);
  let offsetMinutes = 0;
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2));
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = sign * (offsetHours * 60 + offsetMins);
  }
  const utc = utcMs(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  return fromEpochMs(utc);
}

/**
 * A timestamp in a JSON body: a number is epoch milliseconds, a string ISO
 * 8601 only. A string of digits there is an ISO year (`"2027"`) or basic
 * form (`"20270101"`), neither of which this parser reads: it is refused,
 * never taken for milliseconds and stored as an instant of 1970.
 */
export function parseInstant(value: unknown): Date | null {
  if (typeof value === 'number') return fromEpochMs(value);
  if (typeof value !== 'string') return null;
  return fromIso(value.trim());
}

/**
 * A timestamp where every value is text (a query string, an HTML form):
 * digits are epoch milliseconds. Instants are kept to the millisecond; a
 * lower bound (`updated_after`, "at or after") rounds finer digits up, so
 * that no instant before the one written passes it.
 */
export function parseInstantText(text: string, beyondMs: BeyondMilliseconds = 'dropped'): Date | null {
  const trimmed = text.trim();
  if (/^-?\d+$/.test(trimmed)) return fromEpochMs(Number(trimmed));
  return fromIso(trimmed, beyondMs);
}
