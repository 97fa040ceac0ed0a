import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchedulerRegistry } from '@nestjs/schedule';
import { processCpuMicros } from '../../../bench/support/proc-usage';
import type { AppConfig } from '../../config/app-config';
import { ScheduledJobs } from '../../database/jobs/scheduled-jobs';
import { nth } from '../../../test/support/defined';
import {
  ensureHistoryDay,
  insertDelivery,
  insertSubscription,
  webhookTables,
  type WebhookTables,
} from '../../../test/support/webhook-rows';
import { DeliveryPartitionsRepository } from '../delivery-partitions.repository';
import { DeliveryQueueRepository } from '../delivery/delivery-queue.repository';
import { OutboxSenderId } from '../outbox/outbox-sender-id';
import { WebhookSubscriptionEntity } from '../entities/webhook-subscription.entity';
import { WebhookSubscriptionRepository } from '../webhook-subscription.repository';
import { PARTITION_DAYS_AHEAD, WebhookRetentionService } from './webhook-retention.service';

const RETENTION_DAYS = 30;
/** The old days the history is written into, well past retention (UTC days before today). */
const OLD_DAYS = [40, 39];

/** The UTC day `daysAgo` before today as a partition suffix (YYYYMMDD). */
function daySuffix(daysAgo: number): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
}

/** Retention on real PostgreSQL, over a history partitioned by day (migration DeliveryQueueAndHistory). */
describe('WebhookRetentionService over the history by day', () => {
  let tables: WebhookTables;
  let retention: WebhookRetentionService;

  before(async () => {
    tables = await webhookTables();
    const config = {
      runBackgroundWork: false,
      serviceRole: 'all',
      webhooks: { retentionDays: RETENTION_DAYS },
    } as unknown as AppConfig;
    retention = new WebhookRetentionService(
      new DeliveryPartitionsRepository(tables.database),
      new WebhookSubscriptionRepository(tables.dataSource.getRepository(WebhookSubscriptionEntity), tables.database),
      new DeliveryQueueRepository(new OutboxSenderId()),
      tables.unitOfWork,
      new ScheduledJobs(tables.database, new SchedulerRegistry(), config),
      config,
    );
  });
  after(async () => tables.dataSource.destroy());

  const one = async <T>(text: string, params: unknown[] = []): Promise<T> =>
    nth(await tables.dataSource.query<T[]>(text, params), 0, 'rows');

  /**
   * CPU milliseconds used so far by each server process serving this test's database (the test
   * run's server is on this machine). Database time as CPU, not as the wall clock: other test files
   * share the machine's cores, and a wall clock counts their work too. Client connections only: an
   * autovacuum worker visiting the database meanwhile is the server's housekeeping, not retention's.
   */
  const serverCpuMs = async (): Promise<Map<number, number>> => {
    const backends = await tables.dataSource.query<Array<{ pid: number }>>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`,
    );
    const used = new Map<number, number>();
    for (const { pid } of backends) used.set(pid, processCpuMicros(pid) / 1000);
    return used;
  };
  /** CPU used between two readings, a process that started between them counted whole. */
  const cpuMsBetween = (earlier: Map<number, number>, later: Map<number, number>): number =>
    [...later.entries()].reduce((sum, [pid, ms]) => sum + ms - (earlier.get(pid) ?? 0), 0);

  const partitionsOf = async (parent: string): Promise<string[]> =>
    (
      await tables.dataSource.query<Array<{ relname: string }>>(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
        [parent],
      )
    ).map((row) => row.relname);

  it('drops whole day partitions past WEBHOOK_RETENTION_DAYS: two million attempts retire in under a second of database time and leave no dead rows', async (t) => {
    const db = tables.dataSource;
    const subscriptionId = await insertSubscription(db);
    // The old days' partitions, as the retention job would have made them ahead back then.
    for (const daysAgo of OLD_DAYS) await ensureHistoryDay(db, daysAgo);
    // 100,000 finished deliveries and 2,000,000 attempts in the old days (twenty attempts each).
    await db.query(
      `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, attempts,
                                             created_at, completed_at)
       SELECT 'old_' || lpad(d::text, 6, '0'), $1, 'order.confirmed', 'ord_' || d, '\\x7b7d', 'failed', 20,
              ((now() AT TIME ZONE 'UTC')::date - $2::int)::timestamp AT TIME ZONE 'UTC',
              ((now() AT TIME ZONE 'UTC')::date - $2::int)::timestamp AT TIME ZONE 'UTC'
                + (d % 2) * interval '1 day' + interval '1 hour'
         FROM generate_series(0, 99999) AS d`,
      [subscriptionId, Math.max(...OLD_DAYS)],
    );
    // Each old day's attempts are loaded into its partition while detached and without its index, then
    // attached again (the index built once, sorted): the same rows, in a fraction of the time.
    for (const daysAgo of OLD_DAYS) {
      const partition = `webhook_delivery_attempt_d${daySuffix(daysAgo)}`;
      const { bounds } = await one<{ bounds: string }>(
        `SELECT pg_get_expr(relpartbound, oid) AS bounds FROM pg_class WHERE relname = $1`,
        [partition],
      );
      await db.query(`ALTER TABLE webhook_delivery_attempt DETACH PARTITION ${partition}`);
      for (const { name } of await db.query<Array<{ name: string }>>(
        `SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = $1::regclass`,
        [partition],
      )) {
        await db.query(`DROP INDEX ${name}`);
      }
      await db.query(
        `INSERT INTO ${partition} (delivery_id, attempted_at, outcome, duration_ms)
         SELECT 'old_' || lpad(d::text, 6, '0'),
                ((now() AT TIME ZONE 'UTC')::date - $1::int)::timestamp AT TIME ZONE 'UTC' + k * interval '1 minute',
                '500', 12
           FROM generate_series(0, 99999) AS d, generate_series(1, 20) AS k
          WHERE d % 2 = $2::int`,
        [daysAgo, Math.max(...OLD_DAYS) - daysAgo],
      );
      await db.query(`ALTER TABLE webhook_delivery_attempt ATTACH PARTITION ${partition} ${bounds}`);
    }
    // What retention keeps: a delivery finished today with its attempt, and one still pending.
    await db.query(
      `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, completed_at)
       VALUES ('recent', $1, 'order.confirmed', 'ord_recent', '\\x7b7d', 'succeeded', now())`,
      [subscriptionId],
    );
    await db.query(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at, created_at)
       VALUES ('waiting', $1, 'order.confirmed', 'ord_waiting', '\\x7b7d', now() + interval '1 hour',
               now() - interval '90 days')`,
      [subscriptionId],
    );
    await db.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms)
       VALUES ('recent', now(), '200', 5)`,
    );
    const { n: attemptsBefore } = await one<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery_attempt`);
    assert.equal(attemptsBefore, 2_000_001);

    // The fresh rows are written out first, so the measurement is retention's work, not the checkpointer's.
    await db.query('CHECKPOINT');
    const before = await serverCpuMs();
    const counts = await retention.purge();
    const ms = cpuMsBetween(before, await serverCpuMs());
    t.diagnostic(`retention over 2,000,001 attempts and 100,001 deliveries: ${Math.round(ms)} ms of database CPU`);
    assert.ok(ms < 1_000, `retention took ${Math.round(ms)} ms of database CPU`);
    assert.equal(counts.partitions, 4, JSON.stringify(counts));
    assert.equal(counts.deliveries, 100_000, JSON.stringify(counts));

    // The old days are gone as files, not as rows: nothing of them is left to vacuum.
    const historyPartitions = await partitionsOf('webhook_delivery_history');
    const attemptPartitions = await partitionsOf('webhook_delivery_attempt');
    for (const daysAgo of OLD_DAYS) {
      assert.ok(!historyPartitions.includes(`webhook_delivery_history_d${daySuffix(daysAgo)}`));
      assert.ok(!attemptPartitions.includes(`webhook_delivery_attempt_d${daySuffix(daysAgo)}`));
    }
    const { tables: leftOver } = await one<{ tables: number }>(
      `SELECT count(*)::int AS tables FROM pg_class WHERE relname = ANY ($1)`,
      [
        OLD_DAYS.flatMap((d) => [
          `webhook_delivery_history_d${daySuffix(d)}`,
          `webhook_delivery_attempt_d${daySuffix(d)}`,
        ]),
      ],
    );
    assert.equal(leftOver, 0, 'detached and dropped, not left aside');
    await db.query(`SELECT pg_stat_force_next_flush()`);
    const { dead } = await one<{ dead: number }>(
      `SELECT coalesce(sum(n_dead_tup), 0)::int AS dead FROM pg_stat_user_tables
        WHERE relid IN (SELECT relid FROM pg_partition_tree('webhook_delivery_history')
                        UNION ALL SELECT relid FROM pg_partition_tree('webhook_delivery_attempt'))`,
    );
    assert.equal(dead, 0);

    const left = await db.query<Array<{ id: string }>>(`SELECT id FROM webhook_delivery_all ORDER BY id`);
    assert.deepEqual(
      left.map((row) => row.id),
      ['recent', 'waiting'],
    );
    const attemptsLeft = await db.query<Array<{ delivery_id: string }>>(
      `SELECT delivery_id FROM webhook_delivery_attempt`,
    );
    assert.deepEqual(
      attemptsLeft.map((row) => row.delivery_id),
      ['recent'],
    );
  });

  it('keeps the deliveries skipped while a subscription is disabled past the retention, for its recovery; a deleted or re-enabled one’s go', async () => {
    const db = tables.dataSource;
    const off = await insertSubscription(db, { enabled: false, consecutiveFailures: 20 });
    const enabled = await insertSubscription(db);
    const deleted = await insertSubscription(db, { enabled: false, deleted: true });
    const old = { status: 'skipped', createdDaysAgo: 45, completedDaysAgo: 45 } as const;
    const kept = await insertDelivery(db, { subscriptionId: off, ...old });
    const gone = [
      await insertDelivery(db, { subscriptionId: enabled, ...old }),
      await insertDelivery(db, { subscriptionId: deleted, ...old }),
      await insertDelivery(db, { subscriptionId: off, ...old, status: 'failed' }),
    ];
    const before = await one<{ seq: string; created_at: Date }>(
      `SELECT seq, created_at FROM webhook_delivery_history WHERE id = $1`,
      [kept],
    );
    await retention.purge();
    const after = await one<{ seq: string; created_at: Date; status: string; partition: string }>(
      `SELECT seq, created_at, status, tableoid::regclass::text AS partition FROM webhook_delivery_history WHERE id = $1`,
      [kept],
    );
    assert.deepEqual(
      [after.seq, after.created_at.toISOString(), after.status, after.partition],
      [before.seq, before.created_at.toISOString(), 'skipped', `webhook_delivery_history_d${daySuffix(0)}`],
    );
    const left = await db.query<Array<{ id: string }>>(`SELECT id FROM webhook_delivery_history WHERE id = ANY ($1)`, [
      gone,
    ]);
    assert.deepEqual(left, []);
  });

  it('makes the partitions of today and the coming days ahead, so a delivery finished tomorrow lands in its own day', async () => {
    await retention.purge();
    const historyPartitions = await partitionsOf('webhook_delivery_history');
    const attemptPartitions = await partitionsOf('webhook_delivery_attempt');
    for (let ahead = 0; ahead <= PARTITION_DAYS_AHEAD; ahead += 1) {
      assert.ok(historyPartitions.includes(`webhook_delivery_history_d${daySuffix(-ahead)}`), `history day +${ahead}`);
      assert.ok(attemptPartitions.includes(`webhook_delivery_attempt_d${daySuffix(-ahead)}`), `attempt day +${ahead}`);
    }
    const subscriptionId = await insertSubscription(tables.dataSource);
    await tables.dataSource.query(
      `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, completed_at)
       VALUES ('tomorrow', $1, 'order.confirmed', 'ord_tomorrow', '\\x7b7d', 'succeeded', now() + interval '1 day')`,
      [subscriptionId],
    );
    const { partition } = await one<{ partition: string }>(
      `SELECT tableoid::regclass::text AS partition FROM webhook_delivery_history WHERE id = 'tomorrow'`,
    );
    assert.equal(partition, `webhook_delivery_history_d${daySuffix(-1)}`);
  });

  it('has no DEFAULT partition: a row for a day without a partition is refused, never parked where retention misses it', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await assert.rejects(
      tables.dataSource.query(
        `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, completed_at)
         VALUES ('far', $1, 'order.confirmed', 'ord_far', '\\x7b7d', 'succeeded', now() + interval '400 days')`,
        [subscriptionId],
      ),
      /no partition of relation "webhook_delivery_history" found for row/,
    );
    const { defaults } = await one<{ defaults: number }>(
      `SELECT count(*)::int AS defaults FROM pg_partitioned_table
        WHERE partrelid IN ('webhook_delivery_history'::regclass, 'webhook_delivery_attempt'::regclass)
          AND partdefid <> 0`,
    );
    assert.equal(defaults, 0);
  });
});
