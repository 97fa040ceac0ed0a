import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { loopbackPortIsFree } from '../../libs/net/free-port';
import { startEmbeddedPostgres, type EmbeddedDatabase, type EmbeddedPostgresOptions } from './embedded-postgres';
import { EmbeddedKeeper } from './embedded-keeper';
import { ensureDatabase } from './ensure-database';
import { sql } from './sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from './sql/sql-statement';

export const EMBEDDED_DATABASE_NAME = 'events_api';

export interface EmbeddedDefault {
  url: string;
  /** True when this process runs the server (it started it, or took over one that had no runner): it stops it. */
  owned: boolean;
  stop(): Promise<void>;
}

export interface OpenEmbeddedOptions {
  /** A one-shot command's: a server it started is left running while another process uses it. */
  leaveRunningWhileUsed?: boolean;
  /**
   * The service's: it keeps the server (embedded-keeper.ts), taking over one
   * that runs with no runner, and `warn` says when the server goes away.
   */
  keep?: { warn: (message: string) => void };
}

const DATA_DIRECTORY = defineStatement<NoParams, { directory: string }>(
  () => sql`SELECT current_setting('data_directory') AS directory`,
  { prepared: false },
);

function realPathOrAsIs(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Whether the server at `url` answers and runs the cluster in `directory`.
 * pg-url names a port, and a port names whatever server holds it now: the
 * data folder's own, or, for a copy of the folder (a backup restored beside
 * the live one, an upgrade rehearsed on a copy), the live folder's server,
 * which must never be taken for this folder's and written to.
 */
export async function servesCluster(url: string, directory: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    const row = await DATA_DIRECTORY.one(NO_PARAMS, { sqlConnection: () => client });
    return row !== null && realPathOrAsIs(row.directory) === realPathOrAsIs(directory);
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const OTHER_CLIENTS = defineStatement<NoParams, { n: number }>(
  () => sql`SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
  { prepared: false },
);

/**
 * Whether another process has a connection to this database (this one's own
 * connection aside): a service that attached to a server a CLI command started.
 */
export async function hasOtherClients(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    const row = await OTHER_CLIENTS.one(NO_PARAMS, { sqlConnection: () => client });
    return (row?.n ?? 0) > 0;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The port of the data folder's last server, from its pg-url; undefined when there is none to read. */
function lastPortOf(url: string | null): number | undefined {
  if (url === null) return undefined;
  try {
    const port = Number(new URL(url).port);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** The same server's URL for another of its databases. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** PostgreSQL's words for a port or socket another server holds (a TCP listener, or its socket's lock file). */
const PORT_TAKEN = /Address already in use|could not create any TCP\/IP sockets|\.s\.PGSQL\.\d+\.lock/;

/**
 * Starts the data folder's server on the port it had last time when that
 * port is free, so the address in pg-url stays the same across restarts:
 * a `DATABASE_URL=$(cat .data/pg-url)` given to a second instance, a
 * migration run or a client keeps working after the service restarts. A
 * port taken meanwhile (by anything, even through the socket alone) gives
 * a new one, as every start had before.
 */
async function startOnLastPort(
  options: EmbeddedPostgresOptions,
  lastPort: number | undefined,
): Promise<EmbeddedDatabase> {
  if (lastPort === undefined || !(await loopbackPortIsFree(lastPort))) return startEmbeddedPostgres(options);
  try {
    return await startEmbeddedPostgres({ ...options, port: lastPort });
  } catch (error) {
    if (!PORT_TAKEN.test(error instanceof Error ? error.message : String(error))) throw error;
    options.log(`port ${lastPort}, the embedded server's last one, is taken: it listens on another one`);
    return startEmbeddedPostgres(options);
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
  options: OpenEmbeddedOptions = {},
): Promise<EmbeddedDefault> {
  const addressFile = join(dataDir, 'pg-url');
  const directory = join(dataDir, 'pg');
  // The service and the CLI stop it on their own signals, last (main.ts, ops.main.ts).
  const serverOptions: EmbeddedPostgresOptions = { directory, persistent: true, home, log, ownProcessGroup: true };
  const lastUrl = existsSync(addressFile) ? readFileSync(addressFile, 'utf8').trim() : null;
  const lastPort = lastPortOf(lastUrl);
  if (lastUrl !== null && lastPort !== undefined && (await servesCluster(lastUrl, directory))) {
    if (options.keep === undefined) return { url: lastUrl, owned: false, stop: async () => undefined };
    const keeper = await EmbeddedKeeper.keep({
      maintenanceUrl: withDatabase(lastUrl, 'postgres'),
      directory,
      port: lastPort,
      started: null,
      startAgain: () => startEmbeddedPostgres({ ...serverOptions, port: lastPort }),
      log: { info: log, warn: options.keep.warn },
    });
    log(
      keeper.runsServer
        ? `the embedded PostgreSQL server in ${directory} was running with no instance to stop it (the one that ran it was killed, or a CLI command started it): this instance runs it now and stops it on shutdown`
        : `the embedded PostgreSQL server in ${directory} is run by another process using this data folder: this instance uses it too`,
    );
    return { url: lastUrl, owned: keeper.runsServer, stop: () => keeper.stop() };
  }
  const server = await startOnLastPort(serverOptions, lastPort);
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
  if (options.keep !== undefined) {
    const keeper = await EmbeddedKeeper.keep({
      maintenanceUrl: server.socketUrlFor('postgres'),
      directory,
      port: server.port,
      started: server,
      startAgain: () => startEmbeddedPostgres({ ...serverOptions, port: server.port }),
      log: { info: log, warn: options.keep.warn },
    }).catch(async (error: unknown) => {
      await server.stop();
      throw error;
    });
    return { url, owned: true, stop: () => keeper.stop() };
  }
  return {
    url,
    owned: true,
    stop: async () => {
      // A one-shot command's server may have been found by a service started meanwhile (it reads pg-url):
      // stopping it would take the database from under that service, which the next start attaches to anyway.
      if (options.leaveRunningWhileUsed === true && (await hasOtherClients(url))) {
        log('the embedded PostgreSQL is left running: another process (a service) is using it');
        return;
      }
      await server.stop();
    },
  };
}
