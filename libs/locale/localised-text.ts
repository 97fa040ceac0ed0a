/**
 * Locale maps (`{"EN": "Jazz night", "DE": "Jazzabend"}`) are flattened to
 * one string in responses. The rule: English (`EN`) when present, otherwise
 * the value of the alphabetically first locale code; null when the map is
 * empty or absent. Deterministic, so ETags stay stable.
 */
export const PREFERRED_LOCALE = 'EN';

export function flattenLocalisedText(map: Record<string, string> | null | undefined): string | null {
  if (map === null || map === undefined) return null;
  const preferred = map[PREFERRED_LOCALE];
  if (typeof preferred === 'string') return preferred;
  const first = Object.keys(map).sort()[0];
  return first === undefined ? null : (map[first] ?? null);
}

/** Locale keys are normalised to UPPERCASE on write. */
export function uppercaseLocaleKeys(map: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [locale, text] of Object.entries(map)) result[locale.toUpperCase()] = text;
  return result;
}

/**
 * A locale code: en, de-CH, pt_BR, zh-Hant-TW. Each repetition must start
 * with a separator that the repeated class cannot match, so the pattern
 * cannot backtrack badly. Shared by event titles and venue descriptions.
 */
export const LOCALE_CODE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;
export const MAX_LOCALES = 50;

/** True when the value is a map of plausible locale codes to strings. */
export function isLocaleMap(
  value: unknown,
  maxLocales = MAX_LOCALES,
  maxLength = 10_000,
): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value as Record<string, unknown>);
  return (
    entries.length <= maxLocales &&
    entries.every(([locale, text]) => LOCALE_CODE.test(locale) && typeof text === 'string' && text.length <= maxLength)
  );
}
