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
