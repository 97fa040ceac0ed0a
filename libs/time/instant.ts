/**
 * The one parser for timestamps in requests: an ISO 8601 string or epoch
 * milliseconds (a number, or a string of digits, as in a query string).
 * It returns null for anything it cannot read exactly; it never guesses.
 *
 * Accepted ISO forms: `YYYY-MM-DD` (midnight UTC), and
 * `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z` or `±HH:MM`/`±HHMM`; without an
 * offset the time is taken as UTC. A space may stand for `T`.
 */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;

const MAX_EPOCH_MS = 8.64e15;

function fromEpochMs(value: number): Date | null {
  if (!Number.isFinite(value) || !Number.isInteger(value) || Math.abs(value) > MAX_EPOCH_MS) return null;
  return new Date(value);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function fromIso(value: string): Date | null {
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
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  let offsetMinutes = 0;
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2));
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = sign * (offsetHours * 60 + offsetMins);
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  return fromEpochMs(utc);
}

export function parseInstant(value: unknown): Date | null {
  if (typeof value === 'number') return fromEpochMs(value);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (/^-?\d+$/.test(trimmed)) return fromEpochMs(Number(trimmed));
  return fromIso(trimmed);
}

/** Timestamps in responses: ISO 8601, UTC, millisecond precision. */
export function formatInstant(value: Date | null | undefined): string | null {
  return value === null || value === undefined ? null : value.toISOString();
}
