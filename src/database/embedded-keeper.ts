import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { EmbeddedDatabase } from './embedded-postgres';
import { failureName } from './failure-name';
import { serverByPid, stopServerProcess } from './server-stop';
import { sql } from './sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from './sql/sql-statement';

/**
 * The `application_name` of each service process's keeper connection: how
 * the one that runs the server counts the others using it.
 */
export const KEEPER_APPLICATION_NAME = 'events-api embedded keeper';

/** How often a keeper looks at its server: how long a server whose runner left goes without one, at most. */
const CHECK_INTERVAL_MS = 1_000;

/** Checks while the server is down before a process that did not run it starts it (its runner is gone too). */
const CHECKS_BEFORE_STARTING_ANOTHERS = 3;

/**
 * Held by the process that runs the data folder's server, on its keeper
 * connection: a session lock ends with its connection, so it outlives no
 * process, killed or not, and exactly one process can hold it.
 */
const TAKE_RUNNER_LOCK = defineStatement<NoParams, { taken: boolean }>(
  () => sql`SELECT pg_try_advisory_lock(hashtext('events-api embedded server runner')) AS taken`,
  { prepared: false },
);

const OTHER_KEEPERS = defineStatement<{ applicationName: string }, { n: number }>(
  (p) => sql`SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE application_name = ${p.applicationName} AND pid <> pg_backend_pid()`,
  { prepared: false },
);

export interface KeeperLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface EmbeddedKeeperOptions {
  /** The server's maintenance database (`postgres`), through its socket. */
  maintenanceUrl: string;
  /** The cluster's folder (`DATA_DIR/pg`), which holds postmaster.pid. */
  directory: string;
  port: number;
  /** The server when this process started it (its child), else null. */
  started: EmbeddedDatabase | null;
  /** Starts the server again on the same port, so that every URL this process holds still leads to it. */
  startAgain(): Promise<EmbeddedDatabase>;
  log: KeeperLog;
}

/** The pid in a cluster's postmaster.pid, when the file is there. */
function postmasterPid(directory: string): number | null {
  try {
    const pid = Number(readFileSync(join(directory, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether a process of this machine runs with that pid (as any OS user). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another OS user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A server this process did not start (it took over a folder's server that
 * had no runner), stopped as one it started is (stopServerProcess).
 */
async function stopByPid(directory: string, log: KeeperLog): Promise<void> {
  const pid = postmasterPid(directory);
  if (pid === null || !processRuns(pid)) return;
  await stopServerProcess(serverByPid(pid, processRuns), (message) => log.warn(message));
}

/**
 * How a service process keeps its data folder's embedded server: one
 * connection to it (outside the pool, counted with the instance's dedicated
 * ones), on which the process that runs the server holds the runner's lock.
 *
 * - The runner stops the server on shutdown, whether it started it or took
 *   it over: a server found running with no runner (its process was killed)
 *   is taken over at once, and one whose runner leaves is taken over by the
 *   next check of another process using it.
 * - A runner that stops while other service processes use the server leaves
 *   it running for them (one of them takes it over), instead of taking
 *   their database away.
 * - When the server goes away underneath its runner (`pg_ctl stop`, its
 *   process killed), the runner says so once and starts it again on the
 *   same port, so the pool's connections find it where they left it; a
 *   process that uses a server whose runner is gone too starts it after a
 *   few checks.
 */
export class EmbeddedKeeper {
  private client: Client | null = null;
  private runs = false;
  /** The server is down: said once, when it went, and once when it runs again. */
  private down = false;
  private ranWhenDown = false;
  private checksDown = 0;
  private startFailureSaid = false;
  private stopping = false;
  private busy = false;
  private checking: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private started: EmbeddedDatabase | null;

  private constructor(private readonly options: EmbeddedKeeperOptions) {
    this.started = options.started;
  }

  /** Connects and takes the runner's lock when nobody holds it; the server must be up. */
  static async keep(options: EmbeddedKeeperOptions): Promise<EmbeddedKeeper> {
    const keeper = new EmbeddedKeeper(options);
    if (!(await keeper.connect())) throw new Error('the embedded PostgreSQL server accepts no connection');
    keeper.timer = setInterval(() => keeper.check(), CHECK_INTERVAL_MS);
    keeper.timer.unref();
    return keeper;
  }

  /** Whether this process runs the server (and so stops it on shutdown). */
  get runsServer(): boolean {
    return this.runs;
  }

  /** On shutdown, last: stops the server when this process runs it and no other process uses it. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.checking;
    const client = this.client;
    this.client = null;
    const place = this.place();
    if (client !== null) {
      // Its runner may have left a moment ago.
      if (!this.runs) this.runs = await this.takeRunnerLock(client);
      const others = this.runs ? await this.otherKeepers(client) : 0;
      await client.end().catch(() => undefined);
      if (!this.runs) {
        this.options.log.info(`the embedded PostgreSQL server ${place} is left running: another process runs it`);
        return;
      }
      if (others > 0) {
        this.options.log.info(
          `the embedded PostgreSQL server ${place} is left running for ${others} other process(es) using it: one of them runs it now`,
        );
        return;
      }
    } else if (this.started === null) {
      // The server is down, or only this connection is: a server this process did not start is not its to stop.
      return;
    }
    if (this.started !== null) await this.started.stop();
    else await stopByPid(this.options.directory, this.options.log);
  }

  private place(): string {
    return `in ${this.options.directory} (port ${this.options.port})`;
  }

  /** One check at a time: a start of the server takes longer than the interval. */
  private check(): void {
    if (this.stopping || this.busy) return;
    this.busy = true;
    this.checking = this.checkOnce()
      .catch(() => undefined)
      .finally(() => {
        this.busy = false;
      });
  }

  private async checkOnce(): Promise<void> {
    if (this.stopping) return;
    if (this.client === null) {
      await this.recover();
      return;
    }
    if (this.runs) return;
    if (await this.takeRunnerLock(this.client)) {
      this.options.log.info(
        `this instance runs the embedded PostgreSQL server ${this.place()} now (the process that ran it stopped): it stops it on shutdown`,
      );
    }
  }

  /** Connects the keeper connection and takes the runner's lock if it is free; false when the server is not there. */
  private async connect(): Promise<boolean> {
    const client = new Client({
      connectionString: this.options.maintenanceUrl,
      application_name: KEEPER_APPLICATION_NAME,
      connectionTimeoutMillis: 2_000,
    });
    // The connection's end says what happened; an error on an idle client must not become an uncaught one.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch {
      await client.end().catch(() => undefined);
      return false;
    }
    client.once('end', () => this.lost(client));
    this.client = client;
    await this.takeRunnerLock(client);
    return true;
  }

  private async takeRunnerLock(client: Client): Promise<boolean> {
    try {
      const row = await TAKE_RUNNER_LOCK.one(NO_PARAMS, { sqlConnection: () => client });
      if (row?.taken === true) this.runs = true;
    } catch {
      // The connection's end, if that is what failed, is handled where it ends.
    }
    return this.runs;
  }

  private async otherKeepers(client: Client): Promise<number> {
    try {
      const row = await OTHER_KEEPERS.one(
        { applicationName: KEEPER_APPLICATION_NAME },
        { sqlConnection: () => client },
      );
      return row?.n ?? 0;
    } catch {
      return 0;
    }
  }

  /** The keeper connection ended: the server stopped, or the connection alone was cut (then it reconnects). */
  private lost(client: Client): void {
    if (this.client !== client || this.stopping) return;
    this.client = null;
    this.ranWhenDown = this.runs;
    this.runs = false;
    this.checksDown = 0;
    this.check();
  }

  private async recover(): Promise<void> {
    if (await this.connect()) {
      if (this.down) this.options.log.info(`the embedded PostgreSQL server ${this.place()} runs again`);
      this.down = false;
      this.startFailureSaid = false;
      return;
    }
    const place = this.place();
    if (!this.down) {
      this.down = true;
      this.options.log.warn(
        this.ranWhenDown
          ? `the embedded PostgreSQL server ${place}, which this instance runs, stopped underneath it ` +
              '(pg_ctl stop, or its process ended): requests that need the database fail until it runs again; starting it again'
          : `the embedded PostgreSQL server ${place}, which another process runs, went away: waiting for it to run again`,
      );
    }
    // A postmaster still there is stopping or starting: its end, or its readiness, comes first.
    const pid = postmasterPid(this.options.directory);
    if (pid !== null && processRuns(pid)) return;
    this.checksDown += 1;
    if (!this.ranWhenDown && this.checksDown < CHECKS_BEFORE_STARTING_ANOTHERS) return;
    try {
      this.started = await this.options.startAgain();
    } catch (error) {
      if (!this.startFailureSaid) {
        this.startFailureSaid = true;
        this.options.log.warn(
          `the embedded PostgreSQL server ${place} could not be started again (${failureName(error)}): trying again every ${CHECK_INTERVAL_MS} ms`,
        );
      }
      return;
    }
    if (this.stopping) return;
    this.ranWhenDown = true;
    await this.recover();
  }
}
