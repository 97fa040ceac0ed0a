import { hash } from 'node:crypto';

/**
 * A strong ETag computed over the exact response body, so it changes only
 * when a visible value changes (`updatedAt` is visible, so any write moves it).
 */
export function entityTagOf(body: unknown): string {
  return entityTagOfJson(JSON.stringify(body));
}

/** The same tag from the body's JSON text, for a caller that sends that text (`SerializedBody`). */
export function entityTagOfJson(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 32)}"`;
}

/** True when an `If-None-Match` / `If-Match` header value lists the tag (or is `*`). Weak tags never match strongly. */
export function headerMatches(header: string, tag: string): boolean {
  return header
    .split(',')
    .map((candidate) => candidate.trim())
    .some((candidate) => candidate === '*' || candidate === tag);
}
