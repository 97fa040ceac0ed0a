import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from 'pg';
import { freshDatabase } from '../../test/support/test-database';

/** The run's server is started by startEmbeddedPostgres, as the service's embedded default is. */
describe('startEmbeddedPostgres', () => {
  it('runs every session in UTC, whatever zone initdb wrote into the cluster’s configuration', async () => {
    const client = new Client({ connectionString: await freshDatabase() });
    await client.connect();
    try {
      const { rows } = await client.query<{ setting: string; source: string; now: string }>(
        `SELECT setting, source, now()::text AS now FROM pg_settings WHERE name = 'TimeZone'`,
      );
      // From the server's command line, so a cluster made on a machine in another zone answers in UTC too.
      assert.deepEqual(
        { setting: rows[0]!.setting, source: rows[0]!.source },
        { setting: 'UTC', source: 'command line' },
      );
      assert.match(rows[0]!.now, /\+00$/, 'timestamps are written with the +00 offset the fast reading expects');
    } finally {
      await client.end();
    }
  });
});
