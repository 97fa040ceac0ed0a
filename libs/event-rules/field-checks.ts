/**
 * Shared checks for untrusted request values. They throw `InvalidField` so the
 * parsers can read top to bottom; each public parser catches it at its edge and
 * turns it into a result value, so nothing outside `libs/event-rules` ever sees
 * the exception.
 */
export class InvalidField extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidField';
  }
}

export type CheckResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Runs a throwing parser and converts only our own rejection into a result. */
export function toResult<T>(parse: () => T): CheckResult<T> {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (error instanceof InvalidField) return { ok: false, message: error.message };
    throw error;
  }
}

export const MAX_STRING_LENGTH = 10_000;
export const MAX_ID_LENGTH = 256;
export const MAX_ARRAY_ITEMS = 100;
export const MAX_JSON_DEPTH = 10;
export const MAX_JSON_CHARS = 65_536;

/**
 * Only literals from a JSON body (or `{}` / `Object.create(null)` built by a
 * caller) count: a Date, Map or class instance is not a JSON object and would
 * be stored as something other than what was validated.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Reads only own properties, so nothing inherited from a prototype is ever taken as input. */
export function ownValue(source: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(source, key) ? source[key] : undefined;
}

export function expectString(value: unknown, field: string, maxLength = MAX_STRING_LENGTH): string {
  if (typeof value !== 'string') throw new InvalidField(`${field} must be a string`);
  if (value.length > maxLength) throw new InvalidField(`${field} must be at most ${maxLength} characters`);
  return value;
}

/** Identifiers are compared and looked up, so an empty one can only be a client bug. */
export function expectId(value: unknown, field: string): string {
  const text = expectString(value, field, MAX_ID_LENGTH);
  if (text.length === 0) throw new InvalidField(`${field} must be a non-empty string`);
  return text;
}

export function expectNullableString(value: unknown, field: string, maxLength = MAX_STRING_LENGTH): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw new InvalidField(`${field} must be a string or null`);
  return expectString(value, field, maxLength);
}

/** No coercion from `"true"` or `1`: the contract treats only real booleans as booleans. */
export function expectBoolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidField(`${field} must be a boolean`);
  return value;
}

export function expectArray(value: unknown, field: string, what: string, maxItems = MAX_ARRAY_ITEMS): unknown[] {
  if (!Array.isArray(value)) throw new InvalidField(`${field} must be an array of ${what}`);
  if (value.length > maxItems) throw new InvalidField(`${field} may hold at most ${maxItems} items`);
  return value as unknown[];
}

export function expectStringArray(value: unknown, field: string, maxLength = MAX_STRING_LENGTH): string[] {
  return expectArray(value, field, 'strings').map((item, index) => expectString(item, `${field}[${index}]`, maxLength));
}

export function expectIdArray(value: unknown, field: string): string[] {
  return expectArray(value, field, 'strings').map((item, index) => expectId(item, `${field}[${index}]`));
}

export function expectPlainObject(value: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new InvalidField(`${field} must be an object`);
  return value;
}

/** Keys end up in error messages; a client must not be able to make those arbitrarily long. */
export function shortKey(key: string): string {
  return key.length > 40 ? `${key.slice(0, 40)}…` : key;
}

function checkJsonValue(value: unknown, path: string, depth: number): void {
  if (depth > MAX_JSON_DEPTH) throw new InvalidField(`${path} is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidField(`${path} must be a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item: unknown, index) => checkJsonValue(item, `${path}[${index}]`, depth + 1));
    return;
  }
  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) checkJsonValue(value[key], `${path}.${shortKey(key)}`, depth + 1);
    return;
  }
  throw new InvalidField(`${path} must hold only JSON values`);
}

/**
 * Free-form values (metadata, theme parameters, links) are stored as given,
 * so they are bounded in depth and size, and copied through JSON so the patch
 * never shares references with the request or carries non-JSON values. The
 * depth walk runs first because it also stops a cyclic object before
 * `JSON.stringify` would throw on it. JSON.parse defines a `__proto__` key as
 * an ordinary own property, so such a key cannot change the copy's prototype.
 */
export function expectJsonValue(value: unknown, field: string): unknown {
  checkJsonValue(value, field, 0);
  const serialised = JSON.stringify(value);
  if (serialised.length > MAX_JSON_CHARS) {
    throw new InvalidField(`${field} is too large (at most ${MAX_JSON_CHARS} characters as JSON)`);
  }
  return JSON.parse(serialised) as unknown;
}

export function expectJsonObject(value: unknown, field: string): Record<string, unknown> {
  return expectJsonValue(expectPlainObject(value, field), field) as Record<string, unknown>;
}
