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

/**
 * True when an `If-Match` header value lists the tag (or is `*`). `If-Match`
 * compares strongly (RFC 9110, 13.1.1): a weak tag (`W/"…"`) never matches.
 */
export function ifMatchMatches(header: string, tag: string): boolean {
  return listedTags(header).some((candidate) => candidate === '*' || candidate === tag);
}

/**
 * True when an `If-None-Match` header value lists the tag (or is `*`).
 * `If-None-Match` compares weakly (RFC 9110, 13.1.2): `W/"x"` matches `"x"`,
 * as a cache or a proxy that compresses the body (and so weakens its tag)
 * sends it back.
 */
export function ifNoneMatchMatches(header: string, tag: string): boolean {
  const opaque = tag.replace(WEAK_PREFIX, '');
  return listedTags(header).some((candidate) => candidate === '*' || candidate.replace(WEAK_PREFIX, '') === opaque);
}

const WEAK_PREFIX = /^W\//;

function listedTags(header: string): string[] {
  return header.split(',').map((candidate) => candidate.trim());
}
