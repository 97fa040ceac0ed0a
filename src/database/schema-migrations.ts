import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientBase } from 'pg';
import { MigrationExecutor, type DataSource, type MigrationInterface } from 'typeorm';
import { ConfigError } from '../config/app-config';
import { sql } from './sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from './sql/sql-statement';

/** How often an instance waiting for another one's migrations asks again. */
const LOCK_RETRY_MS = 500;

/**
 * One session-level advisory lock for the whole schema: instances started at
 * the same moment on a database with pending migrations would otherwise
 * apply the same migration at once, and all but one fail their start. The
 * session holds it, not a transaction, because each migration commits on its
 * own; a process that dies mid-way ends its session and so frees the lock.
 */
const TRY_LOCK = defineStatement<NoParams, { locked: boolean }>(
  () => sql`SELECT pg_try_advisory_lock(hashtext('schema migrations')) AS locked`,
  { prepared: false },
);
const UNLOCK = defineStatement<NoParams>(() => sql`SELECT pg_advisory_unlock(hashtext('schema migrations'))`, {
  prepared: false,
});

/**
 * Applies the pending migrations, one instance at a time: an instance that
 * finds another applying them says so once and waits, then applies what is
 * still pending (usually nothing). Each one applied is logged. The lock and the migrations share one
 * connection, so this needs no more than a pool of one.
 */
export async function applyPendingMigrations(
  dataSource: DataSource,
  logger: Pick<Logger, 'log'> = new Logger('Migrations'),
): Promise<void> {
  const runner = dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as ClientBase;
    const session = { sqlConnection: () => client };
    let waiting = false;
    while ((await TRY_LOCK.one(NO_PARAMS, session))?.locked !== true) {
      if (!waiting) logger.log('another instance is applying migrations: waiting until it has finished');
      waiting = true;
      await sleep(LOCK_RETRY_MS);
    }
    try {
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = dataSource.options.migrationsTransactionMode ?? 'all';
      // Said one line each, so an operator sees what a start changed in the schema.
      for (const applied of await executor.executePendingMigrations()) logger.log(`applied migration ${applied.name}`);
    } finally {
      await UNLOCK.affected(NO_PARAMS, session);
    }
  } finally {
    await runner.release();
  }
}

/**
 * For a process that must not change the schema (`npm run ops`): refuses to
 * go on when this build has migrations the database has not applied, naming
 * them, instead of applying them under instances of the old build that are
 * still serving it.
 */
export async function refusePendingMigrations(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  try {
    const pending = await new MigrationExecutor(dataSource, runner).getPendingMigrations();
    if (pending.length === 0) return;
    const names = pending.map((migration) => migration.name).join(', ');
    throw new ConfigError(
      `the database's schema is behind this build: ${pending.length} migration(s) not applied (${names}). ` +
        'Start the service of this build first (it applies them at start), then run the command again.',
    );
  } finally {
    await runner.release();
  }
}

/**
 * The name TypeORM records for a migration it applied: its `name`, or its
 * class name when it declares none (as `migration:create` writes one). The
 * readiness check compares by it, so a migration without a `name` does not
 * read as pending for ever.
 */
export function migrationName(migration: MigrationInterface): string {
  return migration.name || migration.constructor.name;
}
