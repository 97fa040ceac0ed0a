import { LOCALE_CODE, MAX_LOCALES } from '../locale/localised-text';
import { parseInstant } from '../time/instant';
import { CalendarDay } from './date-only';
import {
  InvalidField,
  MAX_STRING_LENGTH,
  expectArray,
  expectBoolean,
  expectId,
  expectIdArray,
  expectJsonObject,
  expectJsonValue,
  expectString,
  expectStringArray,
  isPlainObject,
  ownValue,
  shortKey,
} from './field-checks';
import { OnlineMeeting, parseOnlineMeetingValue } from './online-meeting';
import { Planning, parsePlanningValue } from './planning';

export const VISIBILITIES = ['draft', 'unlisted', 'cancelled', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** The public API may only create drafts and move them to unlisted; the rest happens in the dashboard. */
export const API_WRITABLE_VISIBILITIES = ['draft', 'unlisted'] as const satisfies readonly Visibility[];

export const MAX_ADDITIONAL_LOCATIONS = 8;
export { MAX_LOCALES };
const MAX_LOCALE_KEY_LENGTH = 35;
const MAX_TAG_LENGTH = 200;
const MAX_BLOB_NAME_LENGTH = 1_024;
const MAX_TIME_TEXT_LENGTH = 64;
const MAX_TITLE_FONT_SCALE = 10;

/** Keys of the stored event a client may never write; listed so tests and docs can name them. */
export const SERVER_OWNED_EVENT_FIELDS = [
  'id',
  'createdAt',
  'updatedAt',
  'organizerId',
  'firstPublishedAt',
  'editorialTier',
  'groupSizeMin',
  'groupSizeIdeal',
  'groupSizeMax',
  'groupSizeUncapped',
  'accessPasswordHash',
  'accessPasswordSalt',
  'priority',
  'embedding',
  'hasEmbedding',
  'ticketing',
  'templateId',
  'venueId',
  'refundOffer',
] as const;

/** The writable fields of the EventPatch table, validated and normalised. Absent means "leave unchanged". */
export interface EventPatch {
  /** Locale code (UPPERCASED) to text. */
  title?: Record<string, string>;
  description?: Record<string, string>;
  startTime?: Date;
  endTime?: Date;
  dateOnly?: boolean;
  locationId?: string;
  /** Deduplicated, without `locationId`, at most 8. */
  additionalLocationIds?: string[];
  /** `null` clears it. */
  planning?: Planning | null;
  /** `null` clears it. */
  onlineMeeting?: OnlineMeeting | null;
  imageBlobName?: string;
  imageBlobNames?: string[];
  tags?: string[];
  subtags?: string[];
  languages?: string[];
  metadata?: Record<string, unknown>;
  visibility?: Visibility;
  themeColor?: string;
  secondaryThemeColor?: string;
  backgroundStyle?: string;
  colorMode?: string;
  backgroundColor?: string;
  headingFont?: string;
  titleFontScale?: number;
  backgroundPrimaryColor?: string;
  backgroundParams?: Record<string, unknown>;
  plasmaPreset?: Record<string, unknown>;
  hideLocation?: boolean;
  hideRelatedEvents?: boolean;
  groupSizeOverride?: Record<string, unknown>;
  seriesId?: string;
  links?: Record<string, unknown>[];
  /** Not stored: the service reads it to decide on a refund offer, then forgets it. */
  refundOfferOnChange?: boolean;
}

export type EventPatchMode = 'create' | 'update' | 'internal';
export type EventPatchErrorCode = 'invalid_argument' | 'forbidden';
export type EventPatchResult =
  | { ok: true; patch: EventPatch }
  | { ok: false; code: EventPatchErrorCode; message: string };

function parseLocaleMap(value: unknown, field: string): Record<string, string> {
  if (!isPlainObject(value)) throw new InvalidField(`${field} must be an object mapping locale codes to strings`);
  const keys = Object.keys(value);
  if (keys.length > MAX_LOCALES) throw new InvalidField(`${field} may hold at most ${MAX_LOCALES} locales`);
  const result: Record<string, string> = {};
  for (const key of keys) {
    if (key.length > MAX_LOCALE_KEY_LENGTH || !LOCALE_CODE.test(key)) {
      throw new InvalidField(`${field} has an invalid locale code ${JSON.stringify(shortKey(key))}`);
    }
    const text = value[key];
    if (typeof text !== 'string') {
      throw new InvalidField(`${field} must be an object mapping locale codes to strings (${field}.${key} is not)`);
    }
    const locale = key.toUpperCase();
    // `en` and `EN` would collapse into one key; silently picking one would lose text the client sent.
    if (Object.hasOwn(result, locale)) {
      throw new InvalidField(`${field} gives the locale ${locale} more than once (keys differ only in case)`);
    }
    result[locale] = expectString(text, `${field}.${key}`);
  }
  return result;
}

/** An ISO 8601 date with no time of day. */
const DATE_ALONE = /^\d{4}-\d{2}-\d{2}$/;

function parseTime(value: unknown, field: string): Date {
  const instant =
    (typeof value === 'string' && value.length <= MAX_TIME_TEXT_LENGTH) || typeof value === 'number'
      ? parseInstant(value)
      : null;
  if (instant === null) {
    throw new InvalidField(`${field} must be an ISO 8601 date-time string or integer epoch milliseconds`);
  }
  // A date alone names a calendar day: a date-only event keeps that day in any venue's zone.
  const dayAlone = typeof value === 'string' ? DATE_ALONE.exec(value.trim()) : null;
  return dayAlone === null ? instant : new CalendarDay(instant, dayAlone[0]);
}

function parseVisibility(value: unknown, field: string): Visibility {
  if (typeof value !== 'string' || !(VISIBILITIES as readonly string[]).includes(value)) {
    throw new InvalidField(`${field} must be one of ${VISIBILITIES.join(', ')}`);
  }
  return value as Visibility;
}

function parseFontScale(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TITLE_FONT_SCALE) {
    throw new InvalidField(`${field} must be a number greater than 0 and at most ${MAX_TITLE_FONT_SCALE}`);
  }
  return value;
}

function parseBlobName(value: unknown, field: string): string {
  const name = expectString(value, field, MAX_BLOB_NAME_LENGTH);
  if (name.length === 0) throw new InvalidField(`${field} must be a non-empty string`);
  return name;
}

function parseLinks(value: unknown, field: string): Record<string, unknown>[] {
  const items = expectArray(value, field, 'objects');
  items.forEach((item, index) => {
    if (!isPlainObject(item)) throw new InvalidField(`${field}[${index}] must be an object`);
  });
  // One size budget for the whole list, not one per link.
  return expectJsonValue(items, field) as Record<string, unknown>[];
}

const styleString = (value: unknown, field: string): string => expectString(value, field, MAX_STRING_LENGTH);
const tagList = (value: unknown, field: string): string[] => expectStringArray(value, field, MAX_TAG_LENGTH);

type FieldValues = { [K in keyof EventPatch]-?: Exclude<EventPatch[K], undefined> };
type FieldParsers = { [K in keyof FieldValues]: (value: unknown, field: K) => FieldValues[K] };

/**
 * One parser per writable field, in the order of the contract's table; the
 * first failing field in that order is the one the error names. FieldValues
 * drops the `?`, so the compiler insists that every EventPatch field has one.
 */
const FIELD_PARSERS: FieldParsers = {
  title: parseLocaleMap,
  description: parseLocaleMap,
  startTime: parseTime,
  endTime: parseTime,
  dateOnly: expectBoolean,
  locationId: expectId,
  additionalLocationIds: expectIdArray,
  planning: (value, field) => (value === null ? null : parsePlanningValue(value, field)),
  onlineMeeting: (value, field) => (value === null ? null : parseOnlineMeetingValue(value, field)),
  imageBlobName: parseBlobName,
  imageBlobNames: (value, field) =>
    expectArray(value, field, 'strings').map((item, i) => parseBlobName(item, `${field}[${i}]`)),
  tags: tagList,
  subtags: tagList,
  languages: tagList,
  metadata: expectJsonObject,
  visibility: parseVisibility,
  themeColor: styleString,
  secondaryThemeColor: styleString,
  backgroundStyle: styleString,
  colorMode: styleString,
  backgroundColor: styleString,
  headingFont: styleString,
  titleFontScale: parseFontScale,
  backgroundPrimaryColor: styleString,
  backgroundParams: expectJsonObject,
  plasmaPreset: expectJsonObject,
  hideLocation: expectBoolean,
  hideRelatedEvents: expectBoolean,
  groupSizeOverride: expectJsonObject,
  seriesId: expectId,
  links: parseLinks,
  refundOfferOnChange: expectBoolean,
};

export const EVENT_PATCH_FIELDS = Object.freeze(Object.keys(FIELD_PARSERS) as (keyof EventPatch)[]);

/**
 * Fields the service stores by its own rules rather than as given: the two
 * instants (`dateOnly` moves them to noon in the venue's time zone), the
 * additional locations (deduplicated against the primary) and the refund
 * flag (read, never stored).
 */
export const SPECIALLY_STORED_FIELDS = [
  'startTime',
  'endTime',
  'additionalLocationIds',
  'refundOfferOnChange',
] as const;

export type DirectlyStoredField = Exclude<keyof EventPatch, (typeof SPECIALLY_STORED_FIELDS)[number]>;

/**
 * Every other writable field is stored exactly as parsed, under the same
 * name. Derived from the one field table, so a new EventPatch field is
 * stored without a second list to remember.
 */
export const DIRECTLY_STORED_FIELDS: readonly DirectlyStoredField[] = Object.freeze(
  EVENT_PATCH_FIELDS.filter(
    (field): field is DirectlyStoredField => !(SPECIALLY_STORED_FIELDS as readonly string[]).includes(field),
  ),
);

/** The only fields where `null` carries a meaning the contract defines ("clear it"). */
const NULLABLE_FIELDS: ReadonlySet<keyof EventPatch> = new Set<keyof EventPatch>(['planning', 'onlineMeeting']);

function assignField<K extends keyof FieldValues>(patch: EventPatch, key: K, value: unknown): void {
  const parsed: FieldValues[K] = FIELD_PARSERS[key](value, key);
  patch[key] = parsed;
}

/**
 * Keeps the first occurrence of each id, drops the primary location (a
 * client echoing it there must not get it shown twice), then caps at 8. The
 * cap comes last so an echoed primary or a duplicate never costs a slot. The
 * service calls this again after merging a PATCH with the stored event,
 * because the primary may come from either side.
 */
export function normaliseAdditionalLocationIds(ids: readonly string[], primaryLocationId: string | null): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const id of ids) {
    if (result.length === MAX_ADDITIONAL_LOCATIONS) break;
    if (id === primaryLocationId || seen.has(id)) continue;
    seen.add(id);
    result.push(id);
  }
  return result;
}

function invalid(message: string): EventPatchResult {
  return { ok: false, code: 'invalid_argument', message };
}

/**
 * Turns an untrusted request body into a validated, normalised patch.
 *
 * - Keys outside the EventPatch table, including the server-owned ones, are
 *   dropped silently, as the contract says; only own properties are read.
 * - `undefined` is treated as absent (JSON cannot send it, but internal
 *   callers build bodies in code).
 * - `null` is accepted only for `planning` and `onlineMeeting`, where it
 *   means "clear". For every other field it is refused rather than read as
 *   "clear" or "ignore": the contract gives no meaning to it, and quietly
 *   dropping it would tell the client a value was removed when it was not.
 *
 * Order of checks: every shape and type check (and the `startTime` required
 * on create, and endTime not before startTime) runs before the visibility
 * rule, so a `403 forbidden` always describes a request that was otherwise
 * acceptable, and a malformed body gets the 400 that tells the client what to
 * fix. An unknown visibility string is a malformed value (400); `cancelled`
 * and `public` are well-formed but not the API's to set (403), except in
 * `internal` mode, which also makes `startTime` optional (fixtures).
 */
export function parseEventPatch(body: unknown, mode: EventPatchMode): EventPatchResult {
  if (!isPlainObject(body)) return invalid('The request body must be a JSON object');
  const patch: EventPatch = {};
  try {
    for (const key of EVENT_PATCH_FIELDS) {
      const value = ownValue(body, key);
      if (value === undefined) continue;
      if (value === null && !NULLABLE_FIELDS.has(key)) {
        throw new InvalidField(`${key} must not be null (omit it to leave the value unchanged)`);
      }
      assignField(patch, key, value);
    }
  } catch (error) {
    if (error instanceof InvalidField) return invalid(error.message);
    throw error;
  }

  if (mode === 'create' && patch.startTime === undefined) return invalid('startTime is required');
  if (
    patch.startTime !== undefined &&
    patch.endTime !== undefined &&
    patch.endTime.getTime() < patch.startTime.getTime()
  ) {
    return invalid('endTime must not be before startTime');
  }
  if (patch.additionalLocationIds !== undefined) {
    patch.additionalLocationIds = normaliseAdditionalLocationIds(patch.additionalLocationIds, patch.locationId ?? null);
  }

  if (
    mode !== 'internal' &&
    patch.visibility !== undefined &&
    !(API_WRITABLE_VISIBILITIES as readonly string[]).includes(patch.visibility)
  ) {
    return {
      ok: false,
      code: 'forbidden',
      message: `visibility ${patch.visibility} cannot be set: only draft and unlisted can be set through the API`,
    };
  }
  return { ok: true, patch };
}

/**
 * Whether the patch would change anything stored. `refundOfferOnChange` does
 * not count: it is an instruction about this save, not a field, so a PATCH
 * carrying only it changes nothing and answers "no writable fields were given".
 */
export function hasWritableFields(patch: EventPatch): boolean {
  return EVENT_PATCH_FIELDS.some((key) => key !== 'refundOfferOnChange' && patch[key] !== undefined);
}
