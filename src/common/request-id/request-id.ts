import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's `X-Request-Id` is echoed when it is a plausible token: 1 to 64
 * characters, each an ASCII letter, digit or one of `-`, `_`, `.`, `:`, `+`,
 * `/`, `=` (UUIDs, ULIDs, trace ids and base64 ids all fit). Anything else
 * (too long, spaces, quotes, non-ASCII, several values) is replaced by a fresh
 * UUID so that logs and headers never carry caller-controlled junk.
 */
export const PLAUSIBLE_REQUEST_ID = /^[A-Za-z0-9._:+/=-]{1,64}$/;

export function isPlausibleRequestId(value: unknown): value is string {
  return typeof value === 'string' && PLAUSIBLE_REQUEST_ID.test(value);
}

/** Fastify's `genReqId`: runs first, before routing, so every response can carry the id. */
export function requestIdFor(raw: IncomingMessage): string {
  const supplied = raw.headers[REQUEST_ID_HEADER];
  return isPlausibleRequestId(supplied) ? supplied : randomUUID();
}
