import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ensureDatabase } from '../../src/database/ensure-database';

export const TEMPLATE_DATABASE = 'events_api_template';

/**
 * Clones the template by copying its files (one checkpoint, then a file copy)
 * rather than through the WAL block by block, PostgreSQL's default: about a
 * third of the time for a database this small, paid by every test file.
 */
async function cloneTemplate(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(
      `CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE ${client.escapeIdentifier(TEMPLATE_DATABASE)} STRATEGY FILE_COPY`,
    );
  } finally {
    await client.end();
  }
}

/** The run's server, as its admin URL (set by the test runner). */
function runAdminUrl(): string {
  const adminUrl = process.env['TEST_PG_ADMIN_URL'];
  if (adminUrl === undefined) throw new Error('run tests through `npm test` (it starts PostgreSQL)');
  return adminUrl;
}

/** The URL of database `name` on the run's server. */
function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A fresh, migrated database cloned from the run's template; returns its URL. */
export async function freshDatabase(): Promise<string> {
  const adminUrl = runAdminUrl();
  const name = `test_${randomBytes(6).toString('hex')}`;
  // CREATE DATABASE ... TEMPLATE refuses while another session uses the template; retry briefly.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await cloneTemplate(adminUrl, name);
      break;
    } catch (error) {
      // A retry after a reply that was lost finds the database made: that is success.
      if (attempt > 1 && (error as { code?: string }).code === '42P04') break;
      if (attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
  return databaseUrl(adminUrl, name);
}

/** A new database without a schema, for a migration's test to migrate its own way; returns its URL. */
export async function emptyDatabase(prefix: string): Promise<string> {
  const adminUrl = runAdminUrl();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  return databaseUrl(adminUrl, name);
}
