import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres';
import { ensureDatabase } from './ensure-database';

export const EMBEDDED_DATABASE_NAME = 'events_api';

export interface EmbeddedDefault {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

async function reachable(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * The database of the embedded default (no DATABASE_URL): a PostgreSQL
 * cluster in `<dataDir>/pg`. A running service writes where it listens, so
 * `npm run ops` reaches the same server instead of trying to start a second
 * one on a cluster that is in use; with no server running it starts one itself.
 */
export async function openEmbeddedDefault(
  dataDir: string,
  home: string,
  log: (message: string) => void,
): Promise<EmbeddedDefault> {
  const addressFile = join(dataDir, 'pg-url');
  if (existsSync(addressFile)) {
    const url = readFileSync(addressFile, 'utf8').trim();
    if (await reachable(url)) return { url, owned: false, stop: async () => undefined };
  }
  const server = await startEmbeddedPostgres({ directory: join(dataDir, 'pg'), persistent: true, home, log });
  try {
    await ensureDatabase(server.adminUrl, EMBEDDED_DATABASE_NAME);
  } catch (error) {
    await server.stop();
    throw error;
  }
  // Through the server's Unix socket: the same server and protocol without loopback TCP's cost per message
  // (docs/performance.md, "The embedded database's socket").
  const url = server.socketUrlFor(EMBEDDED_DATABASE_NAME);
  writeFileSync(addressFile, `${url}\n`, { mode: 0o600 });
  return { url, owned: true, stop: () => server.stop() };
}
