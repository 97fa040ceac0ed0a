/** Small display helpers the templates share. */

/** `2026-11-23 18:20:03 UTC` (instants are stored and sent in UTC; the page says so). */
export function instant(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** What `instant` shows (seconds optional, `UTC` in any case), as a person copies it from a page. */
const SHOWN_INSTANT = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}(?::\d{2})?) UTC$/i;

/**
 * The text of a form's time field, with the format the pages show
 * (`2026-11-23 18:20:03 UTC`) written as the ISO 8601 it stands for, so a
 * time copied from a page reads back; any other text is left as typed, for
 * the one instant parser to accept or refuse. Forms only: the JSON APIs take
 * ISO 8601 and epoch milliseconds, as their contract says.
 */
export function instantFieldText(text: string): string {
  const shown = SHOWN_INSTANT.exec(text.trim());
  return shown === null ? text : `${shown[1]}T${shown[2]}Z`;
}

/** Integer minor units as a decimal amount (2 decimals; the service stores no currency exponent). */
export function money(minor: number, currency: string): string {
  const sign = minor < 0 ? '-' : '';
  const absolute = Math.abs(minor);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')} ${currency}`;
}

export function milliseconds(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value} ms`;
}

export function percent(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '—' : `${Math.round(ratio * 1000) / 10} %`;
}
