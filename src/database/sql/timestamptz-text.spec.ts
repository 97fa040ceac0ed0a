import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { freshDatabase } from '../../../test/support/test-database';
import { isoTimestampSql } from '../iso-timestamp-sql';
import { ISO_TIMESTAMP_TYPES, isoFromTimestamptzText } from './timestamptz-text';

/** Instants a view may hold: every precision PostgreSQL writes, the edges of the years 0001 to 9999, leap days. */
const INSTANTS = [
  '2026-11-27T05:59:41.000Z',
  '2026-11-27T05:59:41.100Z',
  '2026-11-27T05:59:41.120Z',
  '2026-11-27T05:59:41.123Z',
  '1999-01-02T03:04:05.678Z',
  '2024-02-29T23:59:59.999Z',
  '0001-01-01T00:00:00.000Z',
  '0001-01-01T02:00:00.000Z',
  '1850-06-01T12:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
];

describe('timestamptz read as ISO text', () => {
  let client: Client;
  before(async () => {
    client = new Client({ connectionString: await freshDatabase(), types: ISO_TIMESTAMP_TYPES });
    await client.connect();
  });
  after(async () => client.end());

  /** The parser's answer and to_char's for one instant, read in a session of the given time zone. */
  async function bothWays(instant: string, microseconds = ''): Promise<{ parsed: string; formatted: string }> {
    const { rows } = await client.query<{ parsed: string; formatted: string }>(
      `SELECT t AS parsed, ${isoTimestampSql('t')} AS formatted FROM (SELECT ($1::timestamptz + $2::interval) AS t) s`,
      [instant, `${microseconds === '' ? 0 : Number(microseconds)} microseconds`],
    );
    return rows[0]!;
  }

  for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam', 'America/New_York']) {
    it(`gives what to_char and Date#toISOString give, in a session whose time zone is ${zone}`, async () => {
      await client.query(`SET TimeZone = '${zone}'`);
      for (const instant of INSTANTS) {
        const { parsed, formatted } = await bothWays(instant);
        assert.equal(parsed, formatted, `${instant} in ${zone}`);
        assert.equal(parsed, new Date(instant).toISOString(), `${instant} in ${zone}`);
      }
    });
  }

  it('cuts microseconds to milliseconds as to_char does, never rounding up', async () => {
    await client.query(`SET TimeZone = 'UTC'`);
    for (const micros of ['1', '500', '999']) {
      const { parsed, formatted } = await bothWays('2026-11-27T05:59:41.123Z', micros);
      assert.equal(formatted, '2026-11-27T05:59:41.123Z');
      assert.equal(parsed, formatted, `plus ${micros} µs`);
    }
  });

  it('refuses text that is not a timestamptz rather than answer a wrong instant', () => {
    assert.throws(() => isoFromTimestamptzText('27/11/2026 05:59:41'), /not a timestamptz/);
  });
});
