import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';

const MIGRATIONS = join(__dirname, '..', '..', 'src', 'database', 'migrations');

/**
 * Runs `work` with a data source over the compiled migrations before
 * `migration` (a file name without its extension, e.g.
 * `1763900026000-StrandedDeliveries`), or up to and including it: a
 * migration's test migrates to just before it, writes rows as the older
 * schema held them, then runs (or reverts) the migration itself.
 */
export async function withMigrationsUpTo(
  url: string,
  migration: string,
  including: boolean,
  work: (source: DataSource) => Promise<unknown>,
): Promise<void> {
  const files = readdirSync(MIGRATIONS)
    .filter((file) => file.endsWith('.js') && (file < migration || (including && file.startsWith(migration))))
    .map((file) => join(MIGRATIONS, file));
  const source = new DataSource({ ...dataSourceOptions(url), entities: [], migrations: files });
  await source.initialize();
  try {
    await work(source);
  } finally {
    await source.destroy();
  }
}
