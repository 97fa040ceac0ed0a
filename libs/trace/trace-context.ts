import { randomBytes } from 'node:crypto';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), the part a
 * webhook sender needs: read a caller's `traceparent`, start a trace when
 * there is none, and write one per outgoing attempt.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ALL_ZERO = /^0+$/;

/** The trace id of a `traceparent` header, or null when it is missing or invalid (then a new trace starts). */
export function traceIdFromTraceparent(header: unknown): string | null {
  if (typeof header !== 'string') return null;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return null;
  const [, version, traceId, parentId] = match;
  // The pattern's groups are not optional, so a match always has all three.
  if (version === undefined || traceId === undefined || parentId === undefined) return null;
  // Version ff is forbidden; version 00 allows nothing after the flags.
  if (version === 'ff' || (version === '00' && header.trim().length !== 55)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return null;
  return traceId;
}

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** A `traceparent` for one outgoing request of the trace: a fresh span id each time, sampled. */
export function traceparentFor(traceId: string): string {
  return `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
}
