import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { emptyDatabase } from './test-database';

const MIGRATIONS = join(__dirname, '..', '..', 'src', 'database', 'migrations');

/**
 * Which compiled migrations a data source runs: every one, those before a
 * migration, or those up to and including it (a migration is named by its
 * file name without the extension, e.g. `1763900026000-StrandedDeliveries`).
 */
export type MigrationsWanted = 'all' | { before: string } | { through: string };

function migrationFiles(wanted: MigrationsWanted): string[] {
  const wants = (file: string): boolean =>
    wanted === 'all' ||
    ('before' in wanted ? file < wanted.before : file < wanted.through || file.startsWith(wanted.through));
  return readdirSync(MIGRATIONS)
    .filter((file) => file.endsWith('.js') && wants(file))
    .map((file) => join(MIGRATIONS, file));
}

/**
 * Runs `work` with a data source over the migrations wanted: a migration's
 * test migrates to just before it, writes rows as the older schema held them,
 * then runs (or reverts) the migration itself.
 */
export async function withMigrations(
  url: string,
  wanted: MigrationsWanted,
  work: (source: DataSource) => Promise<unknown>,
): Promise<void> {
  const source = new DataSource({ ...dataSourceOptions(url), entities: [], migrations: migrationFiles(wanted) });
  await source.initialize();
  try {
    await work(source);
  } finally {
    await source.destroy();
  }
}

/** A new database migrated to just before `migration`, and a connection for the rows the older schema held. */
export async function databaseBefore(prefix: string, migration: string): Promise<{ url: string; db: DataSource }> {
  const url = await emptyDatabase(prefix);
  await withMigrations(url, { before: migration }, (source) => source.runMigrations());
  const db = new DataSource({ type: 'postgres', url });
  await db.initialize();
  return { url, db };
}

/** Subscriptions of one organiser, in the columns every schema since webhooks began has had. */
export async function insertSubscriptionRows(db: DataSource, organiserId: string, ids: string[]): Promise<void> {
  await db.query(
    `INSERT INTO webhook_subscription (id, principal_type, principal_id, url, events, secret_sealed)
     SELECT id, 'organiser', $1, 'https://receiver.example/hook', '{order.confirmed}', 'sealed'
       FROM unnest($2::text[]) AS id`,
    [organiserId, ids],
  );
}
