import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { databaseClient } from './support/database-client';
import { internalApi } from './support/http-client';
import { databaseBefore } from './support/migration-database';
import { emptyDatabase } from './support/test-database';
import { startTestService, type TestService } from './support/test-service';

const RECOUNTED = '1763900029000-WebhookQueueDeadRowsCounted';
/** Rows written and deleted in the queue, as the queue's ballast is (a fraction of its 20,000: the same state, sooner). */
const DELETED_ROWS = 2_000;

async function queueDeadRowsCounted(url: string): Promise<number> {
  const client = await databaseClient(url);
  try {
    const result = await client.query<{ dead: number }>(
      `SELECT n_dead_tup::int AS dead FROM pg_stat_user_tables WHERE relid = 'webhook_delivery'::regclass`,
    );
    return result.rows[0]?.dead ?? Number.NaN;
  } finally {
    await client.end();
  }
}

async function scrapedQueueDeadRows(service: TestService): Promise<number> {
  const answer = await internalApi(service)('GET', '/internal/metrics');
  assert.equal(answer.status, 200, answer.text);
  const line = answer.text.split('\n').find((text) => text.startsWith('webhook_queue_dead_rows '));
  return Number(line?.split(' ')[1]);
}

describe('webhook_queue_dead_rows on a fresh database', () => {
  it('reads a small figure right after a start has migrated an empty database', async () => {
    const service = await startTestService({}, { databaseUrl: await emptyDatabase('fresh_install') });
    try {
      const dead = await scrapedQueueDeadRows(service);
      assert.ok(dead < 100, `webhook_queue_dead_rows ${dead} on a fresh database`);
    } finally {
      await service.close();
    }
  });

  it('reads a small figure once the last migration is applied, even where the rows a migration wrote and deleted in the queue were counted dead', async () => {
    const { url, db } = await databaseBefore('queue_dead_rows', RECOUNTED);
    await db.destroy();
    // The ballast's DELETE is counted after its VACUUM when the migrating session reports it late, which no
    // one outside that session can bring about. The same count is made here for certain: rows deleted and
    // reported, before the last migration. Autovacuum, which would also set it right in time, is kept off
    // this table, so that what the test sees is what the migrations leave.
    const client = await databaseClient(url);
    try {
      await client.query(`ALTER TABLE webhook_delivery SET (autovacuum_enabled = false)`);
      await client.query(
        `INSERT INTO webhook_subscription (id, principal_type, principal_id, url, events, secret_sealed)
         VALUES ('whk_filler', 'organiser', 'org_filler', 'https://invalid.invalid/', '{}', '')`,
      );
      await client.query(
        `INSERT INTO webhook_delivery (id, seq, subscription_id, event_type, subject_id, payload, trace_id)
         SELECT 'filler_' || n, 0, 'whk_filler', 'filler', 'filler_' || n, '\\x', repeat('0', 32)
           FROM generate_series(1, $1::int) AS n`,
        [DELETED_ROWS],
      );
      await client.query(`DELETE FROM webhook_subscription WHERE id = 'whk_filler'`);
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
    } finally {
      await client.end();
    }
    assert.ok(
      (await queueDeadRowsCounted(url)) >= DELETED_ROWS,
      'the deleted rows are counted before the last migration',
    );

    const service = await startTestService({}, { databaseUrl: url });
    try {
      const dead = await scrapedQueueDeadRows(service);
      assert.ok(dead < 100, `webhook_queue_dead_rows ${dead} on a fresh database`);
    } finally {
      await service.close();
    }
  });
});
