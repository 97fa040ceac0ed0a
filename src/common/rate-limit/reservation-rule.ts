/**
 * How many units an instance asks the shared counter for at once, when its
 * requests keep coming: one round trip to PostgreSQL serves up to this many
 * requests. A block is 16 units, or 1/256 of a larger limit (at most 256
 * units, from a limit of 65,536): an account with a large budget costs one
 * round trip per 256 requests, while what a block can leave unused stays
 * under 0.4% of the limit (see the bound below).
 */
export const RESERVATION_BLOCK = 16;
export const LARGEST_RESERVATION_BLOCK = 256;

export function reservationBlock(limit: number): number {
  return Math.min(LARGEST_RESERVATION_BLOCK, Math.max(RESERVATION_BLOCK, Math.floor(limit / 256)));
}

/**
 * The reservation rule, applied by the database inside the one upsert that
 * grants units (database-budget.storage.ts writes the same expression in
 * SQL), so every grant is decided on the counter's current value, under its
 * row lock:
 *
 *     grant = min(want, max(1, floor(left / (2 · instances))), left)    (0 when left ≤ 0)
 *
 * where `left` is the limit less the units already granted in the window and
 * `instances` the live instances.
 *
 * Never over the limit: a grant is at most `left`, so the units granted in a
 * window never add up past the limit, whatever the interleaving; an instance
 * serves only units it was granted.
 *
 * Unused units: a granted unit goes unused when its instance gets no further
 * request before the window ends. A grant is at most `left / (2N)`, so in the
 * last `2N` units of a window's budget every grant is one unit; while every
 * instance keeps receiving requests (a load balancer spreading them), an
 * instance that finds the budget used up leaves at most one unit on each
 * other instance: at most N − 1 units of the limit go unserved (the unit test
 * beside this file plays it out). When an instance stops receiving requests
 * right after a grant, what it holds is at most `min(want, limit / (2N))`,
 * so in any case at most (N − 1) · min(want, limit / (2N)) units go unused.
 *
 * An instance asks for its next block before the current one runs out (when
 * a quarter of it is left) only while its grants are whole blocks, i.e. far
 * from the limit: it then holds at most a block and a quarter, and near the
 * limit, where grants shrink, it asks only when it holds nothing, so the
 * bounds above stand.
 */
export function grantFor(want: number, left: number, instances: number): number {
  if (left <= 0) return 0;
  return Math.min(want, Math.max(1, Math.floor(left / (2 * Math.max(1, instances)))), left);
}
