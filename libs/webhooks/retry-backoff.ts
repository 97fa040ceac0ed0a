export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** Fraction of the nominal delay added or removed at random; 0.2 means ±20%. */
  jitter?: number;
}

export interface ScheduleOptions {
  baseMs: number;
  maxMs: number;
  maxAttempts: number;
}

export interface RetryAfterBounds {
  minMs: number;
  maxMs: number;
}

export const DEFAULT_JITTER = 0.2;

/**
 * Production defaults. The design notes ask for 8 to 12 attempts over about
 * three days (Stripe retries for three days, pretix 12 times over ~59 hours).
 * With `min(base * 2^(n-1), max)` a one-minute base cannot get there in twelve
 * attempts (the doublings only add up to ~34 hours), so the base is ten
 * minutes: 10m, 20m, 40m, 1h20, 2h40, 5h20, 10h40, then 12h four times,
 * about 2.9 days in all.
 */
export const DEFAULT_RETRY_SCHEDULE = {
  baseMs: 10 * 60_000,
  maxMs: 12 * 60 * 60_000,
  maxAttempts: 12,
  jitter: DEFAULT_JITTER,
} as const;

// 2^1000 is still finite, so `0 * 2^exponent` stays 0 instead of becoming NaN
// (0 * Infinity) and a huge attempt number simply lands on the cap.
const MAX_EXPONENT = 1000;

// describeSchedule builds an array, so a mistyped setting must not allocate millions of entries.
const MAX_DESCRIBED_ATTEMPTS = 1000;

function assertDuration(name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite, non-negative number`);
}

function assertAttempt(attempt: number): void {
  if (!Number.isSafeInteger(attempt) || attempt < 1) throw new RangeError('attempt must be a whole number from 1');
}

function nominalDelayMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.min(attempt - 1, MAX_EXPONENT), maxMs);
}

/**
 * How long to wait after attempt number `attempt` (1-based) failed:
 * `min(base * 2^(attempt-1), max)` spread by ±jitter, so that deliveries that
 * failed together during one receiver outage do not all come back together.
 * `random` is injected so the worker's schedule is testable.
 */
export function retryDelayMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  assertAttempt(attempt);
  assertDuration('baseMs', options.baseMs);
  assertDuration('maxMs', options.maxMs);
  const jitter = options.jitter ?? DEFAULT_JITTER;
  if (!Number.isFinite(jitter) || jitter < 0 || jitter > 1) throw new RangeError('jitter must be between 0 and 1');

  const nominal = nominalDelayMs(attempt, options.baseMs, options.maxMs);
  const drawn = random();
  // A misbehaving random source must not be able to push the delay outside
  // the documented band, so its value is clamped (and NaN means "no jitter").
  const unit = Number.isNaN(drawn) ? 0.5 : Math.min(1, Math.max(0, drawn));
  const jittered = Math.round(nominal * (1 + jitter * (2 * unit - 1)));
  return Math.max(0, Math.min(jittered, Math.floor(options.maxMs * (1 + jitter))));
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const IMF_FIXDATE = /^(?:mon|tue|wed|thu|fri|sat|sun), (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const RFC_850 =
  /^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday), (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const ASCTIME = /^(?:mon|tue|wed|thu|fri|sat|sun) ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

function utcMs(
  year: number,
  monthName: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | null {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  if (month < 0 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  if (day > new Date(Date.UTC(year, month + 1, 0)).getUTCDate()) return null;
  // A leap second (:60) is read as :59 rather than rolling into the next minute.
  return Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
}

/**
 * The three HTTP-date forms of RFC 9110 §5.6.7, matched exactly: Date.parse
 * would read values such as "1.5" or "tomorrow-ish" as dates.
 */
function parseHttpDate(value: string, now: Date): number | null {
  // The patterns' groups are all required, so the '' defaults never apply (and would fail as day 0 if they did).
  let match = IMF_FIXDATE.exec(value);
  if (match !== null) {
    const [, d = '', mon = '', y = '', h = '', mi = '', s = ''] = match;
    return utcMs(Number(y), mon, Number(d), Number(h), Number(mi), Number(s));
  }
  match = RFC_850.exec(value);
  if (match !== null) {
    const [, d = '', mon = '', yy = '', h = '', mi = '', s = ''] = match;
    // RFC 9110: a two-digit year that looks more than 50 years ahead is in the past century.
    const nowYear = now.getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + Number(yy);
    if (year > nowYear + 50) year -= 100;
    return utcMs(year, mon, Number(d), Number(h), Number(mi), Number(s));
  }
  match = ASCTIME.exec(value);
  if (match !== null) {
    const [, mon = '', d = '', h = '', mi = '', s = '', y = ''] = match;
    return utcMs(Number(y), mon, Number(d.trim()), Number(h), Number(mi), Number(s));
  }
  return null;
}

/**
 * A receiver's `Retry-After` (on a 429 or 503) as a delay, clamped to
 * `bounds` so that a receiver can neither make us hammer it nor park a
 * delivery for longer than the schedule allows (the worker then waits the
 * longer of it and the attempt's scheduled wait). Null means "use the
 * schedule".
 */
export function retryAfterDelayMs(headerValue: string | undefined, now: Date, bounds: RetryAfterBounds): number | null {
  assertDuration('minMs', bounds.minMs);
  assertDuration('maxMs', bounds.maxMs);
  if (bounds.minMs > bounds.maxMs) throw new RangeError('minMs must not exceed maxMs');
  if (headerValue === undefined) return null;
  const value = headerValue.trim();
  if (value === '') return null;

  let delayMs: number | null;
  if (/^\d+$/.test(value)) {
    delayMs = Number(value) * 1000;
  } else {
    const at = parseHttpDate(value, now);
    delayMs = at === null ? null : at - now.getTime();
  }
  if (delayMs === null || Number.isNaN(delayMs)) return null;
  return Math.round(Math.min(bounds.maxMs, Math.max(bounds.minMs, delayMs)));
}

/**
 * The nominal wait before each retry (no jitter), for the docs and the
 * startup log: entry i is the wait after attempt i+1 failed, so a delivery with
 * `maxAttempts` attempts has `maxAttempts - 1` entries.
 */
export function describeSchedule(options: ScheduleOptions): number[] {
  assertDuration('baseMs', options.baseMs);
  assertDuration('maxMs', options.maxMs);
  if (
    !Number.isSafeInteger(options.maxAttempts) ||
    options.maxAttempts < 1 ||
    options.maxAttempts > MAX_DESCRIBED_ATTEMPTS
  ) {
    throw new RangeError(`maxAttempts must be a whole number from 1 to ${MAX_DESCRIBED_ATTEMPTS}`);
  }
  return Array.from({ length: options.maxAttempts - 1 }, (_, i) =>
    Math.round(nominalDelayMs(i + 1, options.baseMs, options.maxMs)),
  );
}
