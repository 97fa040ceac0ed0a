/**
 * A date-only event has no time of day, but it is stored as an instant. Noon
 * in the venue's zone is the instant that stays on the same calendar day for
 * anyone within twelve hours of that zone, and DST switches (which happen at
 * night) never move it off the day.
 */

import { EARLIEST_INSTANT_MS, LATEST_INSTANT_MS } from '../time/instant';

const formatters = new Map<string, Intl.DateTimeFormat>();

// One formatter per zone: constructing them is the expensive part, and the
// set of valid zone names is finite, so the cache cannot grow without bound
// (an invalid name throws before it is stored).
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      // Without the era, a year before the common era reads as the same number after it.
      era: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Date.UTC maps years 0 to 99 onto the 1900s; setUTCFullYear does not. */
function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(instantMs: number, timeZone: string): WallClock {
  const parts = formatterFor(timeZone).formatToParts(new Date(instantMs));
  const text = (type: Intl.DateTimeFormatPartTypes): string => {
    const part = parts.find((candidate) => candidate.type === type);
    // The formatter is built with every one of these fields, so a missing one is an ICU defect.
    if (part === undefined) throw new Error(`Intl.DateTimeFormat gave no ${type} for ${timeZone}`);
    return part.value;
  };
  const value = (type: Intl.DateTimeFormatPartTypes): number => Number(text(type));
  const era = text('era');
  // Read wrongly, an era would move the day by years without a sound.
  if (era !== 'AD' && era !== 'BC') throw new Error(`Intl.DateTimeFormat gave the era ${era} for ${timeZone}`);
  // Intl numbers the years before the common era backwards within their era; Date's years run on through zero.
  const year = era === 'BC' ? 1 - value('year') : value('year');
  return {
    year,
    month: value('month'),
    day: value('day'),
    // Some ICU versions print midnight as 24 even with h23.
    hour: value('hour') % 24,
    minute: value('minute'),
    second: value('second'),
  };
}

/** How far the zone's wall clock is ahead of UTC at that instant, in ms. */
function offsetAt(instantMs: number, timeZone: string): number {
  const wholeSeconds = Math.floor(instantMs / 1000) * 1000;
  const wall = wallClock(wholeSeconds, timeZone);
  const wallAsUtc = utcMs(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second);
  return wallAsUtc - wholeSeconds;
}

export function isValidTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== 'string' || timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

// Late on the last day kept, a zone east of UTC is already in a five-digit year (calendarDayIn).
const DAY_PREFIX = /^(\d{4,5})-(\d{2})-(\d{2})/;

/**
 * A date given with no time of day (`2027-06-15`): as an instant, midnight
 * UTC (what the request parser reads it as everywhere); for a date-only event,
 * the calendar day it names, whatever the venue's zone. Read as an instant,
 * the day would be the one before in every zone west of UTC.
 */
export class CalendarDay extends Date {
  constructor(
    instant: Date,
    /** `YYYY-MM-DD`, as written. */
    readonly day: string,
  ) {
    super(instant.getTime());
  }
}

/** The calendar day (`YYYY-MM-DD`) on which `date` falls in `timeZone`. */
export function calendarDayIn(date: Date, timeZone: string): string {
  return dayText(calendarDay(date, timeZone));
}

function dayText({ year, month, day }: { year: number; month: number; day: number }): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`;
}

/**
 * Noon on the day asked for is no instant the service keeps (between
 * EARLIEST_INSTANT_MS and LATEST_INSTANT_MS): on the first day kept in a zone
 * far east of UTC, on the last in one far west of it.
 */
export class NoonOutOfRange extends RangeError {
  constructor(
    /** `YYYY-MM-DD`: the calendar day in the zone. */
    readonly day: string,
    readonly timeZone: string,
    readonly noon: Date,
  ) {
    super(`noon on ${day} in ${timeZone} is ${noon.toISOString()}, outside the instants kept`);
    this.name = 'NoonOutOfRange';
  }
}

function calendarDay(date: Date | string, timeZone: string): { year: number; month: number; day: number } {
  if (date instanceof CalendarDay) return calendarDay(date.day, timeZone);
  if (typeof date === 'string') {
    const match = DAY_PREFIX.exec(date);
    if (match === null) throw new RangeError('date must start with YYYY-MM-DD');
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    // Dates roll 2025-02-30 over into March; a day that does not exist must not become another one.
    const check = new Date(utcMs(year, month, day));
    if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
      throw new RangeError('date is not a calendar day');
    }
    return { year, month, day };
  }
  if (Number.isNaN(date.getTime())) throw new RangeError('date is invalid');
  const { year, month, day } = wallClock(date.getTime(), timeZone);
  return { year, month, day };
}

/**
 * The instant at 12:00 local time in `timeZone` on the calendar day of
 * `date`: for a Date, the day it falls on in that zone; for a string or a
 * CalendarDay, its `YYYY-MM-DD` as written. Throws RangeError for an unknown zone or an
 * unreadable date, since the caller has validated both already, and
 * NoonOutOfRange when that noon is outside the instants the service keeps.
 */
export function noonInTimeZone(date: Date | string, timeZone: string): Date {
  if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone: ${timeZone}`);
  const { year, month, day } = calendarDay(date, timeZone);
  const noonAsUtc = utcMs(year, month, day, 12);
  // The offset at the first guess can differ from the offset at the answer
  // when a transition lies between them (for zones far from UTC), so the
  // offset is re-read at the candidate and applied once more if it changed.
  const firstOffset = offsetAt(noonAsUtc, timeZone);
  let candidate = noonAsUtc - firstOffset;
  const secondOffset = offsetAt(candidate, timeZone);
  if (secondOffset !== firstOffset) candidate = noonAsUtc - secondOffset;
  if (candidate < EARLIEST_INSTANT_MS || candidate > LATEST_INSTANT_MS) {
    throw new NoonOutOfRange(dayText({ year, month, day }), timeZone, new Date(candidate));
  }
  return new Date(candidate);
}
