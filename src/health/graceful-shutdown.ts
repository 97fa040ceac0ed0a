import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { ReadinessService } from './readiness.service';

/** While draining, connections that fall idle are closed this often. */
const IDLE_SWEEP_MS = 50;

export interface DrainOptions {
  app: INestApplication;
  /** Every listening HTTP server of the app (public and admin). */
  servers: Server[];
  /** SHUTDOWN_TIMEOUT_MS: the longest requests in flight get before their connections are cut. */
  timeoutMs: number;
}

/**
 * The graceful half of shutdown, before Nest's own close:
 * 1. readiness answers 503 from now on;
 * 2. the listeners stop accepting connections; idle keep-alive connections
 *    are closed, and every response from now on says `Connection: close`;
 * 3. requests in flight finish, for at most `timeoutMs`; then what is left
 *    is cut.
 * Then `app.close()` runs Nest's shutdown hooks: the delivery worker lets
 * its attempts in flight finish or gives their leases back, and the
 * database pool closes last. (The caller stops an embedded server after.)
 */
export async function drainAndClose({ app, servers, timeoutMs }: DrainOptions): Promise<void> {
  app.get(ReadinessService, { strict: false }).beginShutdown();
  const closed = Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  // A connection whose request was already under way when the drain began answers it (with
  // `Connection: close`) and is closed as soon as it falls idle.
  const closeIdle = (): void => servers.forEach((server) => server.closeIdleConnections());
  closeIdle();
  const sweep = setInterval(closeIdle, IDLE_SWEEP_MS);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    }),
  ]);
  clearInterval(sweep);
  clearTimeout(timer);
  if (timedOut) {
    servers.forEach((server) => server.closeAllConnections());
    await closed;
  }
  await app.close();
}
