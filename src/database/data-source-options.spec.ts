import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { freshDatabase } from '../../test/support/test-database';
import { dataSourceOptions } from './data-source-options';

/** What the shared database options promise every process that uses them, on real PostgreSQL. */
describe('dataSourceOptions', () => {
  let tables: RepositoryDatabase;

  before(async () => {
    tables = await repositoryDatabase();
  });
  after(() => tables.close());

  it('stores every instant a Date parameter names as given, whatever time zone the process runs in', async () => {
    const instants = ['0001-01-01T00:00:00.000Z', '1850-06-01T12:00:00.123Z', '1930-06-01T12:00:00.000Z'];
    const previous = process.env['TZ'];
    // Zones whose early offsets had seconds (local mean time) or that moved since: the dates pg got wrong.
    for (const zone of ['Europe/Berlin', 'Europe/Amsterdam', 'Pacific/Pago_Pago', 'UTC']) {
      process.env['TZ'] = zone;
      try {
        for (const instant of instants) {
          const [row] = await tables.dataSource.query<Array<{ utc: string }>>(
            `SELECT to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS utc`,
            [new Date(instant)],
          );
          assert.equal(row!.utc, instant, `${instant} sent from a process in ${zone}`);
        }
      } finally {
        if (previous === undefined) delete process.env['TZ'];
        else process.env['TZ'] = previous;
      }
    }
  });

  it('runs every session of the pool in UTC, whatever the database’s default time zone', async () => {
    const url = await freshDatabase();
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      const name = new URL(url).pathname.slice(1);
      await admin.query(`ALTER DATABASE ${admin.escapeIdentifier(name)} SET timezone TO 'Europe/Berlin'`);
    } finally {
      await admin.end();
    }
    const direct = new Client({ connectionString: url });
    await direct.connect();
    try {
      const { rows } = await direct.query<{ zone: string }>(`SELECT current_setting('TimeZone') AS zone`);
      assert.equal(rows[0]!.zone, 'Europe/Berlin', 'a session of its own takes the database’s zone');
    } finally {
      await direct.end();
    }
    const source = new DataSource({ ...dataSourceOptions(url, 4), entities: [] });
    await source.initialize();
    try {
      // Several at once, so that the pool opens new connections, each through its start-up.
      const answers = await Promise.all(
        Array.from({ length: 4 }, () =>
          source.query<Array<{ zone: string; at: string }>>(
            `SELECT current_setting('TimeZone') AS zone, '2026-07-01 12:00:00+00'::timestamptz::text AS at, pg_sleep(0.05)`,
          ),
        ),
      );
      for (const [row] of answers)
        assert.deepEqual({ zone: row!.zone, at: row!.at }, { zone: 'UTC', at: '2026-07-01 12:00:00+00' });
    } finally {
      await source.destroy();
    }
  });
});
