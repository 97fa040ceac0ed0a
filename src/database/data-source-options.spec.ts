import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';

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
});
