import { randomBytes } from 'node:crypto';
import { ensureDatabase } from '../../src/database/ensure-database';

export const TEMPLATE_DATABASE = 'events_api_template';

/** A fresh, migrated database cloned from the run's template; returns its URL. */
export async function freshDatabase(): Promise<string> {
  const adminUrl = process.env['TEST_PG_ADMIN_URL'];
  if (adminUrl === undefined) throw new Error('run tests through `npm test` (it starts PostgreSQL)');
  const name = `test_${randomBytes(6).toString('hex')}`;
  // CREATE DATABASE ... TEMPLATE refuses while another session uses the template; retry briefly.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await ensureDatabase(adminUrl, name, TEMPLATE_DATABASE);
      break;
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
