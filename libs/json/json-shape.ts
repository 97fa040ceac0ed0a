/**
 * The one structural check every JSON request body passes before any rule
 * reads it. It walks the parsed value with an explicit stack (no recursion,
 * so nesting cannot overflow the call stack) and stops at the first problem,
 * so its cost is bounded by the limits themselves, not by the body.
 */
export const JSON_LIMITS = {
  /** Nested objects and arrays; the body itself is depth 1. */
  maxDepth: 32,
  maxKeysPerObject: 1_000,
  /** Every value counts: objects, arrays, strings, numbers, booleans, nulls. */
  maxValues: 10_000,
  /** Characters (UTF-16 code units) in one string or one key: the documented cap. */
  maxStringLength: 10_000,
} as const;

/** NUL (PostgreSQL text cannot hold it) or a UTF-16 surrogate that is not part of a pair (not valid UTF-8). */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for.
const UNSTORABLE = /[\u0000\p{Cs}]/u;

/** Why `text` cannot be stored as PostgreSQL text, or null when it can. */
export function unstorableTextProblem(text: string): string | null {
  const match = UNSTORABLE.exec(text);
  if (match === null) return null;
  return match[0] === '\u0000'
    ? 'must not contain the NUL character (\\u0000)'
    : 'must not contain a lone UTF-16 surrogate (text must be valid Unicode)';
}

interface Pending {
  value: unknown;
  depth: number;
  parent: Pending | null;
  key: string | number | null;
}

function pathOf(entry: Pending): string {
  const parts: string[] = [];
  for (let at: Pending | null = entry; at !== null && at.key !== null; at = at.parent) {
    parts.push(
      typeof at.key === 'number' ? `[${at.key}]` : `.${at.key.length > 40 ? `${at.key.slice(0, 40)}…` : at.key}`,
    );
  }
  const path = parts.reverse().join('');
  return path === '' ? 'the body' : path.replace(/^\./, '');
}

function stringProblem(text: string): string | null {
  if (text.length > JSON_LIMITS.maxStringLength) {
    return `is longer than ${JSON_LIMITS.maxStringLength.toLocaleString('en')} characters`;
  }
  return unstorableTextProblem(text);
}

/**
 * The first structural problem of a parsed JSON value, as a sentence naming
 * where it is, or null when the value is within every limit.
 */
export function jsonShapeProblem(root: unknown): string | null {
  const stack: Pending[] = [{ value: root, depth: 1, parent: null, key: null }];
  let values = 0;
  while (stack.length > 0) {
    const entry = stack.pop() as Pending;
    values += 1;
    if (values > JSON_LIMITS.maxValues) {
      return `The request body holds more than ${JSON_LIMITS.maxValues.toLocaleString('en')} values.`;
    }
    const { value, depth } = entry;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem !== null) return `${pathOf(entry)} ${problem}.`;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > JSON_LIMITS.maxDepth) {
      return `The request body nests deeper than ${JSON_LIMITS.maxDepth} levels (at ${pathOf(entry)}).`;
    }
    if (Array.isArray(value)) {
      // Children are only pushed while the total stays in reach of the limit, so the stack stays bounded too.
      if (values + stack.length + value.length > JSON_LIMITS.maxValues) {
        return `The request body holds more than ${JSON_LIMITS.maxValues.toLocaleString('en')} values.`;
      }
      for (let index = value.length - 1; index >= 0; index -= 1) {
        stack.push({ value: value[index], depth: depth + 1, parent: entry, key: index });
      }
      continue;
    }
    let keys = 0;
    for (const key in value) {
      keys += 1;
      if (keys > JSON_LIMITS.maxKeysPerObject) {
        return `${pathOf(entry)} has more than ${JSON_LIMITS.maxKeysPerObject.toLocaleString('en')} keys.`;
      }
      const child: Pending = { value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: entry, key };
      const keyProblem = stringProblem(key);
      if (keyProblem !== null) return `A key of ${pathOf(entry)} ${keyProblem}.`;
      if (values + stack.length + 1 > JSON_LIMITS.maxValues) {
        return `The request body holds more than ${JSON_LIMITS.maxValues.toLocaleString('en')} values.`;
      }
      stack.push(child);
    }
  }
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * A single pass over the JSON text before it is parsed, so that parsing
 * itself is bounded: depth, members per object and (through the commas,
 * each of which separates two values) the number of values are refused
 * from the bytes, before a 1 MiB body can become half a million objects.
 * Quotes and backslashes are ASCII, so UTF-8 multi-byte characters never
 * confuse the string tracking. Syntax is left to JSON.parse.
 */
export function jsonTextShapeProblem(bytes: Uint8Array): string | null {
  // Members seen so far in each open container (commas + 1 once anything is in it); depth ≤ maxDepth.
  const commas: number[] = [];
  const isObject: boolean[] = [];
  let totalCommas = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (inString) {
      if (byte === BACKSLASH) index += 1;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    switch (byte) {
      case QUOTE:
        inString = true;
        break;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (commas.length >= JSON_LIMITS.maxDepth) {
          return `The request body nests deeper than ${JSON_LIMITS.maxDepth} levels.`;
        }
        commas.push(0);
        isObject.push(byte === OPEN_BRACE);
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        commas.pop();
        isObject.pop();
        break;
      case COMMA: {
        totalCommas += 1;
        if (totalCommas >= JSON_LIMITS.maxValues) {
          return `The request body holds more than ${JSON_LIMITS.maxValues.toLocaleString('en')} values.`;
        }
        const level = commas.length - 1;
        if (level >= 0) {
          commas[level] = (commas[level] ?? 0) + 1;
          if (isObject[level] === true && (commas[level] ?? 0) >= JSON_LIMITS.maxKeysPerObject) {
            return `An object in the request body has more than ${JSON_LIMITS.maxKeysPerObject.toLocaleString('en')} keys.`;
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return null;
}
