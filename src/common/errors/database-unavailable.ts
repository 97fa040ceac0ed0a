import type { FastifyBaseLogger } from 'fastify';
import { isConnectionUnavailable } from '../../database/connection-unavailable';
import { loggableError } from '../logging/loggable-error';

/**
 * How long a caller is asked to wait (`Retry-After`) when the database could
 * not lend the request a connection: long enough for a pool to drain or a
 * failover to finish, short enough that a retry soon finds it back.
 */
export const DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The `503` of a request that wrote nothing before the pool failed it, for the JSON APIs and the pages alike. */
export interface DatabaseUnavailable {
  status: 503;
  message: string;
  headers: Record<string, string>;
}

const DATABASE_UNAVAILABLE: DatabaseUnavailable = {
  status: 503,
  message: `The service could not reach its database. Retry after ${DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS} seconds; quote the request id if it persists.`,
  headers: { 'Retry-After': String(DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS) },
};

/**
 * The `503` answer when the exception is a connection the database's pool
 * could not lend before anything of the request committed
 * (connection-unavailable.ts), else null (the caller's own answer, a 500
 * for anything unexpected).
 */
export function databaseUnavailable(exception: unknown): DatabaseUnavailable | null {
  return isConnectionUnavailable(exception) ? DATABASE_UNAVAILABLE : null;
}

/**
 * How a request that failed on the server is logged, by the JSON APIs and the
 * pages alike: a `warn` when the database lent no connection (its outage is
 * said by readiness and the metrics), an `error` with `unexpected` for any
 * other 5xx; never the exception itself, since a database error carries the
 * SQL parameters and the driver's detail.
 */
export function logServerFailure(log: FastifyBaseLogger, exception: unknown, status: number, unexpected: string): void {
  if (databaseUnavailable(exception) !== null) {
    log.warn({ error: loggableError(exception) }, 'request answered 503: the database lent no connection');
  } else if (status >= 500) {
    log.error({ error: loggableError(exception) }, unexpected);
  }
}
