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

/**
 * Random bytes for ids, drawn from a block filled by the CSPRNG: every
 * request and every webhook attempt needs a few, and a call into the CSPRNG
 * for each costs more than the id (the same reason Node buffers randomUUID).
 */
const RANDOM_BLOCK_BYTES = 4096;
let block = Buffer.alloc(0);
let taken = 0;

function randomHex(bytes: number): string {
  if (taken + bytes > block.length) {
    block = randomBytes(RANDOM_BLOCK_BYTES);
    taken = 0;
  }
  const hex = block.toString('hex', taken, taken + bytes);
  taken += bytes;
  return hex;
}

export function newTraceId(): string {
  return randomHex(16);
}

/** A `traceparent` for one outgoing request of the trace: a fresh span id each time, sampled. */
export function traceparentFor(traceId: string): string {
  return `00-${traceId}-${randomHex(8)}-01`;
}
