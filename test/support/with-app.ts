import { after, before } from 'node:test';
import type { Client } from 'pg';
import { databaseClient } from './database-client';
import { fixtures } from './fixtures';
import { internalApi, publicApi } from './http-client';
import { startTestService, type TestService } from './test-service';

export interface App {
  service: TestService;
  /** Real HTTP on the public listener. */
  api: ReturnType<typeof publicApi>;
  /** Real HTTP on the internal listener, with the admin token. */
  admin: ReturnType<typeof internalApi>;
  make: ReturnType<typeof fixtures>;
  /** A direct connection, for assertions on what was stored (never to make rows). */
  db: Client;
}

/**
 * The set-up of an e2e suite in one line: the real service on loopback over
 * a fresh database (with `env` as its environment overrides), started before
 * the suite's tests and closed after them. Call it inside a describe (or at
 * a file's top level, to share one service among the file's suites); read
 * the members inside tests or hooks, once `before` has run. `options.logTo`
 * receives the service's log lines (see captured-log.ts).
 */
export function withApp(env: Record<string, string> = {}, options: { logTo?: NodeJS.WritableStream } = {}): App {
  const app = {} as App;
  before(async () => {
    app.service = await startTestService(env, options);
    app.api = publicApi(app.service);
    app.admin = internalApi(app.service);
    app.make = fixtures(app.service);
    app.db = await databaseClient(app.service.databaseUrl);
  });
  after(async () => {
    await app.db?.end();
    await app.service?.close();
  });
  return app;
}
