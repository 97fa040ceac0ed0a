import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { captureLog } from './support/captured-log';
import { databaseClient } from './support/database-client';
import { eventually, sleep } from './support/eventually';
import { emptyDatabase } from './support/test-database';
import { startTestService, type TestService } from './support/test-service';

const MIGRATION_COUNT = readdirSync(join(__dirname, '..', 'src', 'database', 'migrations')).filter((file) =>
  file.endsWith('.js'),
).length;

async function readyStatus(service: TestService): Promise<number> {
  return (await fetch(`${service.adminUrl}/readyz`)).status;
}

describe('migrations at start run one instance at a time', () => {
  it('waits, saying so, while another instance holds the migration lock, applies nothing meanwhile, then starts ready and logs each migration it applied', async () => {
    const url = await emptyDatabase('migration_lock');
    const holder = await databaseClient(url);
    const log = captureLog();
    let service: TestService | undefined;
    try {
      await holder.query(`SELECT pg_advisory_lock(hashtext('schema migrations'))`);
      let settled = false;
      const starting = startTestService({ LOG_LEVEL: 'info' }, { databaseUrl: url, logTo: log.stream }).finally(
        () => (settled = true),
      );
      await eventually(
        async () => (log.text().includes('another instance is applying migrations') ? true : undefined),
        'the start to say it waits for another instance',
      );
      await sleep(300);
      assert.equal(settled, false, 'the start waits for the lock');
      const table = await holder.query<{ name: string | null }>(`SELECT to_regclass('schema_migration')::text AS name`);
      assert.equal(table.rows[0]?.name, null, 'nothing is applied while another instance holds the lock');

      await holder.query(`SELECT pg_advisory_unlock(hashtext('schema migrations'))`);
      service = await starting;
      assert.equal(await readyStatus(service), 200);
      const applied = await holder.query<{ count: number }>(`SELECT count(*)::int AS count FROM schema_migration`);
      assert.equal(applied.rows[0]?.count, MIGRATION_COUNT);
      const said = log.lines.filter((line) => String(line['msg']).startsWith('applied migration '));
      assert.equal(said.length, MIGRATION_COUNT, 'each migration applied is logged');
    } finally {
      await service?.close();
      await holder.end();
    }
  });

  it('starts two instances at the same moment on an empty database, each migration applied once', async () => {
    const url = await emptyDatabase('migration_race');
    const services = await Promise.allSettled([
      startTestService({}, { databaseUrl: url }),
      startTestService({}, { databaseUrl: url }),
    ]);
    const db = await databaseClient(url);
    try {
      for (const started of services) {
        assert.equal(started.status, 'fulfilled', started.status === 'rejected' ? String(started.reason) : '');
        assert.equal(await readyStatus(started.value), 200);
      }
      const applied = await db.query<{ count: number; names: number }>(
        `SELECT count(*)::int AS count, count(DISTINCT name)::int AS names FROM schema_migration`,
      );
      assert.deepEqual(applied.rows[0], { count: MIGRATION_COUNT, names: MIGRATION_COUNT });
    } finally {
      await db.end();
      for (const started of services) if (started.status === 'fulfilled') await started.value.close();
    }
  });
});
