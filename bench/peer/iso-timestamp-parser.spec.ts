import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { freshDatabase } from '../../test/support/test-database';
import { isoFromTimestamptzText, TIMESTAMPTZ_OID } from './iso-timestamp-parser';

describe("the peer's timestamptz parser", () => {
  let client: Client;
  before(async () => {
    client = new Client({
      connectionString: await freshDatabase(),
      options: '-c TimeZone=UTC',
      types: { getTypeParser: (oid: number) => (oid === TIMESTAMPTZ_OID ? isoFromTimestamptzText : String) },
    });
    await client.connect();
  });
  after(async () => client.end());

  it('gives what Date#toISOString gives for every precision PostgreSQL writes', async () => {
    const instants = [
      '2026-11-27T05:59:41.000Z',
      '2026-11-27T05:59:41.100Z',
      '2026-11-27T05:59:41.120Z',
      '1999-01-02T03:04:05.678Z',
    ];
    for (const instant of instants) {
      const { rows } = await client.query(`SELECT $1::timestamptz(3) AS at`, [instant]);
      assert.equal(rows[0].at, new Date(instant).toISOString());
    }
  });

  it('refuses text from a session that is not in UTC rather than answer a wrong instant', () => {
    assert.throws(() => isoFromTimestamptzText('2026-11-27 06:59:41.12+01'), /outside UTC/);
  });
});
