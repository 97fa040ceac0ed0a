import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConsoleLogger, Logger, type LoggerService } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MIGRATIONS_TABLE } from '../src/database/data-source-options';
import { databaseBefore, insertSubscriptionRows, withMigrations } from './support/migration-database';

const CONVERSION = '1763900024000-DeliveryQueueAndHistory';
/** The conversion's name as TypeORM records it once run. */
const CONVERSION_NAME = 'DeliveryQueueAndHistory1763900024000';

/** Runs every migration (the conversion and the ones after it). */
const migrateAll = (url: string): Promise<void> => withMigrations(url, 'all', (source) => source.runMigrations());

/**
 * Undoes the migrations back to and including the conversion, newest first: the way back an operator
 * takes with `migration:revert`, once per migration.
 */
function revertConversion(url: string): Promise<void> {
  return withMigrations(url, 'all', async (dataSource) => {
    const converted = async (): Promise<boolean> =>
      (await dataSource.query<unknown[]>(`SELECT 1 FROM ${MIGRATIONS_TABLE} WHERE name = $1`, [CONVERSION_NAME]))
        .length > 0;
    while (await converted()) await dataSource.undoLastMigration();
  });
}

/** The UTC day `daysAgo` before today as a partition suffix (YYYYMMDD). */
function daySuffix(daysAgo: number): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
}

/**
 * The conversion of one delivery table into the queue and the history by
 * day, on a database migrated to just before it and filled the old way.
 */
describe('migration DeliveryQueueAndHistory', () => {
  let db: DataSource;
  let url: string;
  const logged: string[] = [];

  before(async () => {
    ({ url, db } = await databaseBefore('conversion', CONVERSION));
    await insertSubscriptionRows(db, 'org_old', ['whk_old']);
    // 25,000 deliveries (three batches): every tenth still pending (the first of them leased), the rest finished
    // today, two days ago or 500 days ago; two attempts each for the finished ones.
    await db.query(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, status, attempts,
                                     last_status, next_attempt_at, lease_expires_at, lease_token, completed_at)
       SELECT 'dlv_' || lpad(n::text, 5, '0'), 'whk_old', 'order.confirmed', 'ord_' || n, '\\x7b7d',
              CASE WHEN n % 10 = 0 THEN 'pending' ELSE 'succeeded' END, 2, '200',
              CASE WHEN n % 10 = 0 THEN now() END,
              CASE WHEN n = 10 THEN now() + interval '1 minute' END, CASE WHEN n = 10 THEN 'lease' END,
              CASE WHEN n % 10 = 0 THEN NULL
                   WHEN n % 10 < 5 THEN now() WHEN n % 10 < 9 THEN now() - interval '2 days'
                   ELSE now() - interval '500 days' END
         FROM generate_series(1, 25000) AS n`,
    );
    await db.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms, http_status, response_excerpt)
       SELECT d.id, coalesce(d.completed_at, now()) - k * interval '1 millisecond', '200', 7, 200, 'ok'
         FROM webhook_delivery d, generate_series(0, 1) AS k WHERE d.status <> 'pending'`,
    );

    const capture: LoggerService = {
      log: (message: unknown) => logged.push(String(message)),
      error: () => undefined,
      warn: () => undefined,
    };
    Logger.overrideLogger(capture);
    try {
      await migrateAll(url);
    } finally {
      Logger.overrideLogger(new ConsoleLogger());
    }
  });

  after(async () => db.destroy());

  it('converts every delivery and attempt in batches, logging its progress with counts', async () => {
    assert.ok(
      logged.includes('splitting webhook deliveries into queue and day partitions: 25000 deliveries, 45000 attempts'),
      logged.join('\n'),
    );
    assert.ok(logged.includes('webhook deliveries copied: 12500 of 25000'), logged.join('\n'));
    assert.ok(logged.includes('webhook delivery attempts copied: 40000 of 45000'), logged.join('\n'));
    assert.ok(logged.includes('webhook deliveries split: 25000 deliveries, 45000 attempts'));
    const [counts] = await db.query<Array<{ queued: number; history: number; attempts: number; leftovers: number }>>(
      `SELECT (SELECT count(*)::int FROM webhook_delivery) AS queued,
              (SELECT count(*)::int FROM webhook_delivery_history) AS history,
              (SELECT count(*)::int FROM webhook_delivery_attempt) AS attempts,
              (SELECT count(*)::int FROM pg_class
                WHERE relname IN ('webhook_delivery_unsplit', 'webhook_delivery_attempt_unsplit')) AS leftovers`,
    );
    assert.deepEqual(counts, { queued: 2_500, history: 22_500, attempts: 45_000, leftovers: 0 });
  });

  it('puts what is not final in the queue, and each finished delivery and attempt in its day', async () => {
    const placed = await db.query<Array<{ partition: string; n: number }>>(
      `SELECT tableoid::regclass::text AS partition, count(*)::int AS n FROM webhook_delivery_history
        GROUP BY 1 ORDER BY 1`,
    );
    assert.deepEqual(placed, [
      { partition: `webhook_delivery_history_d${daySuffix(500)}`, n: 2_500 },
      { partition: `webhook_delivery_history_d${daySuffix(2)}`, n: 10_000 },
      { partition: `webhook_delivery_history_d${daySuffix(0)}`, n: 10_000 },
    ]);
    const [leased] = await db.query<Array<{ lease_token: string; status: string; seq: string }>>(
      `SELECT lease_token, status, seq::text FROM webhook_delivery WHERE id = 'dlv_00010'`,
    );
    assert.deepEqual(leased, { lease_token: 'lease', status: 'pending', seq: '10' });
    const [attempt] = await db.query<Array<{ http_status: number; response_excerpt: string; partition: string }>>(
      `SELECT http_status, response_excerpt, tableoid::regclass::text AS partition
         FROM webhook_delivery_attempt WHERE delivery_id = 'dlv_00009' LIMIT 1`,
    );
    assert.deepEqual(attempt, {
      http_status: 200,
      response_excerpt: 'ok',
      partition: `webhook_delivery_attempt_d${daySuffix(500)}`,
    });
  });

  it('keeps numbering after the converted rows, and keeps a queued fact from being queued again', async () => {
    const [next] = await db.query<Array<{ seq: string }>>(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload)
       VALUES ('dlv_new', 'whk_old', 'order.confirmed', 'ord_new', '\\x7b7d') RETURNING seq::text`,
    );
    assert.deepEqual(next, { seq: '25001' });
    const again = await db.query<Array<{ id: string }>>(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload)
       VALUES ('dlv_again', 'whk_old', 'order.confirmed', 'ord_10', '\\x7b7d') ON CONFLICT DO NOTHING RETURNING id`,
    );
    assert.deepEqual(again, [], 'the pending fact is in the queue once');
  });

  it('reverts to the one table it converted: every delivery and attempt back, leases kept, and converts again', async () => {
    await revertConversion(url);
    const [reverted] = await db.query<Array<{ deliveries: number; attempts: number; leftovers: number }>>(
      `SELECT (SELECT count(*)::int FROM webhook_delivery) AS deliveries,
              (SELECT count(*)::int FROM webhook_delivery_attempt) AS attempts,
              (SELECT count(*)::int FROM pg_class
                WHERE relname IN ('webhook_delivery_history', 'webhook_delivery_turn', 'webhook_delivery_queue',
                                  'webhook_delivery_attempt_partitioned')) AS leftovers`,
    );
    assert.deepEqual(reverted, { deliveries: 25_001, attempts: 45_000, leftovers: 0 });
    const [leased] = await db.query<Array<{ lease_token: string; status: string }>>(
      `SELECT lease_token, status FROM webhook_delivery WHERE id = 'dlv_00010'`,
    );
    assert.deepEqual(leased, { lease_token: 'lease', status: 'pending' });

    await migrateAll(url);
    const [again] = await db.query<Array<{ queued: number; history: number; attempts: number }>>(
      `SELECT (SELECT count(*)::int FROM webhook_delivery) AS queued,
              (SELECT count(*)::int FROM webhook_delivery_history) AS history,
              (SELECT count(*)::int FROM webhook_delivery_attempt) AS attempts`,
    );
    assert.deepEqual(again, { queued: 2_501, history: 22_500, attempts: 45_000 });
  });
});
