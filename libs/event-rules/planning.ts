import { parseInstant } from '../time/instant';
import {
  CheckResult,
  InvalidField,
  expectArray,
  expectBoolean,
  expectId,
  expectNullableString,
  expectPlainObject,
  expectString,
  ownValue,
  toResult,
} from './field-checks';

export const PLANNING_DATE_MODES = ['fixed', 'options', 'window'] as const;
export type PlanningDateMode = (typeof PLANNING_DATE_MODES)[number];

export const PLANNING_PLACE_MODES = ['venue', 'area', 'open'] as const;
export type PlanningPlaceMode = (typeof PLANNING_PLACE_MODES)[number];

export const MAX_DATE_OPTIONS = 20;
const MAX_CITY_LENGTH = 200;
const MAX_NOTE_LENGTH = 2_000;

/** A candidate date while the organiser is still polling for one. */
export interface PlanningDateOption {
  id: string;
  /** Kept as the client wrote it (a bare day matters when `allDay`); it is checked to be readable. */
  start: string;
  end: string | null;
  allDay: boolean;
  note: string | null;
}

export interface PlanningDate {
  mode: PlanningDateMode;
  options?: PlanningDateOption[];
  from?: string;
  to?: string;
  note?: string | null;
}

export interface PlanningPlace {
  mode: PlanningPlaceMode;
  city?: string;
}

export interface Planning {
  date?: PlanningDate;
  place?: PlanningPlace;
}

function expectMode<T extends string>(value: unknown, field: string, modes: readonly [T, ...T[]]): T {
  if (value === undefined) return modes[0];
  if (typeof value !== 'string' || !(modes as readonly string[]).includes(value)) {
    throw new InvalidField(`${field} must be one of ${modes.join(', ')}`);
  }
  return value as T;
}

/**
 * Dates inside planning stay strings (the contract types them so), but a
 * string nobody can read would make the poll unusable, so each must parse.
 * Numbers are refused even though `parseInstant` reads epoch ms: the stored
 * shape is a string and the dashboard reads it as one.
 */
function expectDateString(value: unknown, field: string): { text: string; instant: Date } {
  const text = expectString(value, field, 64);
  const instant = parseInstant(text);
  if (instant === null) throw new InvalidField(`${field} must be an ISO 8601 date or date-time`);
  return { text, instant };
}

function parseOption(value: unknown, field: string): PlanningDateOption {
  const raw = expectPlainObject(value, field);
  const id = expectId(ownValue(raw, 'id'), `${field}.id`);
  const start = expectDateString(ownValue(raw, 'start'), `${field}.start`);
  const rawEnd = ownValue(raw, 'end');
  let end: string | null = null;
  if (rawEnd !== undefined && rawEnd !== null) {
    const parsedEnd = expectDateString(rawEnd, `${field}.end`);
    if (parsedEnd.instant.getTime() < start.instant.getTime()) {
      throw new InvalidField(`${field}.end must not be before ${field}.start`);
    }
    end = parsedEnd.text;
  }
  const rawAllDay = ownValue(raw, 'allDay');
  const rawNote = ownValue(raw, 'note');
  return {
    id,
    start: start.text,
    end,
    allDay: rawAllDay === undefined ? false : expectBoolean(rawAllDay, `${field}.allDay`),
    note: rawNote === undefined ? null : expectNullableString(rawNote, `${field}.note`, MAX_NOTE_LENGTH),
  };
}

function parseOptions(value: unknown, field: string): PlanningDateOption[] {
  const items = expectArray(value, field, 'objects', MAX_DATE_OPTIONS);
  const options = items.map((item, index) => parseOption(item, `${field}[${index}]`));
  // Votes and the final pick refer to an option by id, so two options sharing one would be indistinguishable.
  const seen = new Set<string>();
  for (const option of options) {
    if (seen.has(option.id)) throw new InvalidField(`${field} has the id ${JSON.stringify(option.id)} more than once`);
    seen.add(option.id);
  }
  return options;
}

function parseDate(value: unknown, field: string): PlanningDate {
  const raw = expectPlainObject(value, field);
  const date: PlanningDate = { mode: expectMode(ownValue(raw, 'mode'), `${field}.mode`, PLANNING_DATE_MODES) };

  // Fields that do not belong to the mode are still checked and kept: the
  // dashboard keeps the options after one is chosen, and switching back to a
  // mode must not lose them.
  const rawOptions = ownValue(raw, 'options');
  if (rawOptions !== undefined) date.options = parseOptions(rawOptions, `${field}.options`);
  const rawFrom = ownValue(raw, 'from');
  const rawTo = ownValue(raw, 'to');
  const from = rawFrom === undefined ? undefined : expectDateString(rawFrom, `${field}.from`);
  const to = rawTo === undefined ? undefined : expectDateString(rawTo, `${field}.to`);
  if (from !== undefined) date.from = from.text;
  if (to !== undefined) date.to = to.text;
  if (from !== undefined && to !== undefined && from.instant.getTime() > to.instant.getTime()) {
    throw new InvalidField(`${field}.from must not be after ${field}.to`);
  }
  const rawNote = ownValue(raw, 'note');
  if (rawNote !== undefined) date.note = expectNullableString(rawNote, `${field}.note`, MAX_NOTE_LENGTH);

  if (date.mode === 'options' && (date.options === undefined || date.options.length === 0)) {
    throw new InvalidField(`${field}.options must hold at least one option when ${field}.mode is options`);
  }
  if (date.mode === 'window' && (from === undefined || to === undefined)) {
    throw new InvalidField(`${field}.from and ${field}.to are required when ${field}.mode is window`);
  }
  return date;
}

function parsePlace(value: unknown, field: string): PlanningPlace {
  const raw = expectPlainObject(value, field);
  const place: PlanningPlace = { mode: expectMode(ownValue(raw, 'mode'), `${field}.mode`, PLANNING_PLACE_MODES) };
  const rawCity = ownValue(raw, 'city');
  if (rawCity !== undefined) place.city = expectString(rawCity, `${field}.city`, MAX_CITY_LENGTH);
  if (place.mode === 'area' && (place.city === undefined || place.city.trim() === '')) {
    throw new InvalidField(`${field}.city is required when ${field}.mode is area`);
  }
  return place;
}

export function parsePlanningValue(value: unknown, field = 'planning'): Planning {
  const raw = expectPlainObject(value, field);
  const planning: Planning = {};
  const rawDate = ownValue(raw, 'date');
  const rawPlace = ownValue(raw, 'place');
  if (rawDate !== undefined) planning.date = parseDate(rawDate, `${field}.date`);
  if (rawPlace !== undefined) planning.place = parsePlace(rawPlace, `${field}.place`);
  return planning;
}

/**
 * Validates and normalises a `planning` object (not `null`: clearing is the
 * caller's concern). Defaults are written out (`date.mode` fixed, `place.mode`
 * venue) so readers never have to know them; unknown keys are dropped.
 */
export function parsePlanning(value: unknown, field = 'planning'): CheckResult<Planning> {
  return toResult(() => parsePlanningValue(value, field));
}

/** `planning` as read back from storage, before any defaults are known to be written out. */
export interface StoredPlanning {
  date?: { mode?: unknown } | null;
}

/**
 * While the date is still being decided, `startTime` is a placeholder, so the
 * event must not go public. The parameter is looser than `Planning` because
 * the publish path reads the stored JSON, which may predate the written-out
 * defaults; a missing (or null) mode means the default, fixed.
 */
export function isPublishable(planning: Planning | StoredPlanning | null | undefined): boolean {
  const mode = planning?.date?.mode;
  return mode === undefined || mode === null || mode === 'fixed';
}
