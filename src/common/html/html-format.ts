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

/** Minor-unit digits by currency code, as Intl resolves them; the codes are few, and a page shows many amounts. */
const MINOR_DIGITS = new Map<string, number>();
const MAX_REMEMBERED_CURRENCIES = 500;

/**
 * Digits of a currency's minor unit (ISO 4217: 0 for JPY, 2 for EUR, 3 for
 * KWD), from Intl, since the service stores none: amounts are integer minor
 * units. 2 for a code Intl cannot read.
 */
function minorDigits(currency: string): number {
  let digits = MINOR_DIGITS.get(currency);
  if (digits === undefined) {
    try {
      const format = new Intl.NumberFormat('en', { style: 'currency', currency });
      digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    if (MINOR_DIGITS.size < MAX_REMEMBERED_CURRENCIES) MINOR_DIGITS.set(currency, digits);
  }
  return digits;
}

/** Integer minor units as a decimal amount with the currency's own minor-unit digits (`1500 JPY`, `15.00 EUR`). */
export function money(minor: number, currency: string): string {
  const sign = minor < 0 ? '-' : '';
  const absolute = Math.abs(minor);
  const digits = minorDigits(currency);
  if (digits === 0) return `${sign}${absolute} ${currency}`;
  const unit = 10 ** digits;
  return `${sign}${Math.floor(absolute / unit)}.${String(absolute % unit).padStart(digits, '0')} ${currency}`;
}

export function milliseconds(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value} ms`;
}

export function percent(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '—' : `${Math.round(ratio * 1000) / 10} %`;
}

/** The most of a description a webhook's name shows (descriptions hold 200 characters); its page shows it whole. */
export const NAME_DESCRIPTION_CHARACTERS = 60;

/**
 * A text of at most `most` characters (code points, so none is cut in two):
 * a longer one ends with "…", cut after its last whole word when that word
 * ends past half the room, else within the word.
 */
export function shortened(text: string, most: number): string {
  const characters = Array.from(text);
  if (characters.length <= most) return text;
  const kept = characters.slice(0, most - 1);
  const atWordEnd = /\s/.test(characters[most - 1] ?? '');
  const lastSpace = kept.findLastIndex((character) => /\s/.test(character));
  const cut = atWordEnd || lastSpace < most / 2 ? kept : kept.slice(0, lastSpace);
  return `${cut.join('').trimEnd()}…`;
}

/**
 * How a page names a webhook subscription (its link in a list, its
 * heading, its title): its host, and its description, shortened, or its id
 * when it has none. An account's subscriptions often share a host, and
 * this is what tells them, and their tabs, apart.
 */
export function webhookName(webhook: { id: string; url: string; description: string | null }): string {
  const host = new URL(webhook.url).host;
  return webhook.description
    ? `Webhook to ${host}: ${shortened(webhook.description, NAME_DESCRIPTION_CHARACTERS)}`
    : `Webhook to ${host} (${webhook.id})`;
}

/**
 * What the polite status beside a delivery log says after a refresh in
 * place, which a screen reader does not otherwise notice: when, how many
 * deliveries the log shows, and the health the badge above it now shows.
 */
export function logRefreshed(at: Date, shown: number, health: string): string {
  const deliveries = `${shown} ${shown === 1 ? 'delivery' : 'deliveries'}`;
  return `Log refreshed at ${at.toISOString().slice(11, 19)} UTC, ${deliveries} shown; health: ${health}.`;
}
