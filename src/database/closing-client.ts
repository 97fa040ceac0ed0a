import { Client } from 'pg';

/** The error pg's client gives a query whose `query_timeout` ran out. */
export const PG_READ_TIMEOUT = 'Query read timeout';

/**
 * The application pool's client: a query whose answer did not come within
 * its `query_timeout` closes the connection. pg leaves such a connection
 * waiting for that answer, and TypeORM gives it back to the pool as healthy,
 * so the pool would lend it out again: each later query on it would wait out
 * the bound too, or read the late answer as its own. Closed, it is dropped.
 * (The SQL kit's statements close theirs the same way, see sql-statement.ts.)
 */
export class ClosingOnTimeoutClient extends Client {}

// pg's own query, read off its prototype once: the override below calls it, then watches the answer.
const query = Object.getOwnPropertyDescriptor(Client.prototype, 'query')?.value as (
  this: Client,
  ...args: unknown[]
) => unknown;
ClosingOnTimeoutClient.prototype.query = function (this: Client, ...args: unknown[]): unknown {
  const result = query.apply(this, args);
  if (result instanceof Promise) {
    result.catch((error: unknown) => {
      if (error instanceof Error && error.message === PG_READ_TIMEOUT) void this.end().catch(() => undefined);
    });
  }
  return result;
} as Client['query'];
