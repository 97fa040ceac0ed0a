import * as pg from 'pg';

/**
 * Errors of lending a connection of the application's pool: none came free
 * within DB_CONNECT_TIMEOUT_SECONDS, or a new one could not be opened (the
 * server refused, never answered, is starting up or shutting down, has no
 * connection slot left). Nothing was sent on a connection that was never
 * lent, so the failed statement did nothing: the request can be answered
 * `503` with a `Retry-After` instead of a `500`, whose outcome a caller
 * cannot know. An error of a statement once sent is not marked, nor one of
 * work after a commit of the same request (see afterCommit).
 */
const unavailable = new WeakSet<object>();

function marked(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) unavailable.add(error);
  return error;
}

/**
 * A failure of work that ran after the request had committed a change: the
 * request was carried out in part, so whatever failed next is no `503` (a
 * retry on its word could apply the change twice, or find it gone).
 */
export class FailedAfterCommit extends Error {}

/** Whether the error, or one it was wrapped around, is a connection the pool could not lend before any commit. */
export function isConnectionUnavailable(error: unknown): boolean {
  let current: unknown = error;
  // A bound on the depth: a cause chain is short, and a cycle must not loop.
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    if (current instanceof FailedAfterCommit) return false;
    if (unavailable.has(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs what a request does after one of its transactions committed: a
 * connection the pool cannot lend there fails the request as a `500`
 * (wrapped in FailedAfterCommit), never a `503`. Every other error passes
 * through as it was thrown (a 404 stays a 404).
 */
export async function afterCommit<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isConnectionUnavailable(error)) throw error;
    throw new FailedAfterCommit('the database lent no connection after a change of this request had committed', {
      cause: error,
    });
  }
}

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * pg's pool, marking the errors of `connect` (which its `query` calls too,
 * as TypeORM's query runners do for every statement and transaction).
 */
export class MarkingPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    if (callback === undefined) {
      return super.connect().catch((error: unknown) => {
        throw marked(error);
      });
    }
    super.connect(((error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) =>
      callback(error ? (marked(error) as Error) : error, client, done)) as Parameters<pg.Pool['connect']>[0]);
  }
}

/** The `pg` module as TypeORM's `driver` option takes it, with the marking pool in place of its own. */
export const PG_WITH_MARKING_POOL: typeof pg = Object.create(pg, { Pool: { value: MarkingPool } }) as typeof pg;
