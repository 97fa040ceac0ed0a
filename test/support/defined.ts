import assert from 'node:assert/strict';

/**
 * Narrows a value the test expects to exist (an array element, a regex group,
 * a map entry), failing with what was missing rather than a TypeError further on.
 */
export function defined<T>(value: T | undefined, what: string): T {
  assert.ok(value !== undefined, `expected ${what}, found nothing`);
  return value;
}

/** `items[index]`, failing with the list's name and length when it is shorter. */
export function nth<T>(items: readonly T[], index: number, what: string): T {
  const item = items[index];
  assert.ok(item !== undefined, `expected ${what} [${index}], but there are only ${items.length}`);
  return item;
}
