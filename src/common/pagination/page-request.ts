import { parseInstantText } from '../../../libs/time/instant';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';

/** The paging rules of the contract, read from the query string. */
export interface PageRequest {
  limit: number;
  /** Raw cursor text; the pager decodes and verifies it. */
  cursor: string | null;
  updatedAfter: Date | null;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

/**
 * `limit`: integers above 100 clamp to 100; missing, non-numeric, zero or
 * negative become 50. Never an error.
 */
export function parseLimit(raw: unknown): number {
  if (typeof raw !== 'string' || !/^\+?\d+$/.test(raw.trim())) return DEFAULT_LIMIT;
  const value = Number(raw.trim());
  if (!Number.isSafeInteger(value) || value < 1) return value >= 1 ? MAX_LIMIT : DEFAULT_LIMIT;
  return Math.min(value, MAX_LIMIT);
}

/**
 * Reads the three paging parameters from a query string; only `cursor` and
 * `updated_after` can be refused (`limit` is clamped, never an error).
 */
export function pageRequestOf(query: Record<string, unknown>): PageRequest {
  const cursor = query['cursor'];
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new DomainError(ErrorCode.InvalidCursor, 'cursor must be given once.');
  }
  const rawUpdatedAfter = query['updated_after'];
  let updatedAfter: Date | null = null;
  if (rawUpdatedAfter !== undefined) {
    // "At or after": a fraction finer than the stored milliseconds rounds up, never letting an earlier row in.
    updatedAfter = typeof rawUpdatedAfter === 'string' ? parseInstantText(rawUpdatedAfter, 'rounded up') : null;
    if (updatedAfter === null) {
      throw DomainError.invalidArgument('updated_after must be an ISO 8601 timestamp or epoch milliseconds.');
    }
  }
  return { limit: parseLimit(query['limit']), cursor: cursor ?? null, updatedAfter };
}
