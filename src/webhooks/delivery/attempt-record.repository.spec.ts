import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { QueryArrayConfig } from 'pg';
import { Database } from '../../database/sql/sql-target';
import { deliveryRow, insertDelivery, insertSubscription } from '../../../test/support/webhook-rows';
import { attemptRecord, CLAIM_LIMITS, claimDue, withWorkerTables } from '../../../test/support/worker-tables';
import { FAILURES_BEFORE_DISABLE } from '../webhook-event-types';
import { AttemptRecordRepository, type AttemptRecorded } from './attempt-record.repository';
import type { ClaimedDelivery } from './claimed-delivery';

/** The worker's attempt records on real PostgreSQL: every statement of AttemptRecordRepository. */
describe('AttemptRecordRepository', () => {
  const tables = withWorkerTables();

  const claim = (leaseToken?: string, limits?: Partial<typeof CLAIM_LIMITS>): Promise<ClaimedDelivery[]> =>
    claimDue(tables.claims, leaseToken, limits);

  /** Today's UTC day as a partition suffix (YYYYMMDD). */
  const today = (): string => new Date().toISOString().slice(0, 10).replaceAll('-', '');

  it('records an attempt: the attempt log, the subscription’s failure count and the delivery’s next state', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const id = await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim();
    assert.ok(claimed);
    const recorded = await tables.attemptRecords.recordAttempt(
      attemptRecord(claimed, { next: { status: 'pending', retryInMs: 60_000 } }),
    );
    assert.deepEqual(recorded, { deliveryUpdated: true, disabledNow: false, warnings: [] });
    assert.deepEqual(await deliveryRow(tables.dataSource, id), {
      status: 'pending',
      attempts: 1,
      lease_token: null,
      last_status: '500',
    });
    const [subscription] = await tables.dataSource.query(
      `SELECT consecutive_failures, last_status, enabled FROM webhook_subscription WHERE id = $1`,
      [subscriptionId],
    );
    assert.deepEqual(subscription, { consecutive_failures: 1, last_status: '500', enabled: true });
    const [log] = await tables.dataSource.query(
      `SELECT outcome, duration_ms, triggered_by FROM webhook_delivery_attempt WHERE delivery_id = $1`,
      [id],
    );
    assert.deepEqual(log, { outcome: '500', duration_ms: 12, triggered_by: 'scheduled' });
  });

  it('records the attempt but leaves the delivery alone when the lease is no longer this worker’s', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const id = await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim('expired');
    assert.ok(claimed);
    await tables.dataSource.query(`UPDATE webhook_delivery SET lease_token = 'another worker' WHERE id = $1`, [id]);
    const recorded = await tables.attemptRecords.recordAttempt(
      attemptRecord(claimed, { succeeded: true, outcome: 200 }),
    );
    assert.equal(recorded.deliveryUpdated, false);
    assert.deepEqual(await deliveryRow(tables.dataSource, id), {
      status: 'pending',
      attempts: 0,
      lease_token: 'another worker',
      last_status: null,
    });
  });

  it('counts a failure towards its subscription only from the holder of the delivery’s lease: a late worker’s attempt is logged, its outcome is not the subscription’s', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const id = await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim('outlived');
    assert.ok(claimed);
    await tables.dataSource.query(`UPDATE webhook_delivery SET lease_token = 'another worker' WHERE id = $1`, [id]);
    const recorded = await tables.attemptRecords.recordAttempt(attemptRecord(claimed));
    assert.equal(recorded.deliveryUpdated, false);
    const [subscription] = await tables.dataSource.query(
      `SELECT consecutive_failures, last_status, enabled FROM webhook_subscription WHERE id = $1`,
      [subscriptionId],
    );
    assert.deepEqual(subscription, { consecutive_failures: 0, last_status: null, enabled: true });
    const [logged] = await tables.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_delivery_attempt WHERE delivery_id = $1`,
      [id],
    );
    assert.equal(logged.n, 1, 'the attempt it made is in the log');
  });

  it('disables the subscription at the twentieth consecutive failure, with a warning, and not before', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, {
      consecutiveFailures: FAILURES_BEFORE_DISABLE - 2,
    });
    await tables.dataSource.query(`UPDATE webhook_subscription SET alert_open = true WHERE id = $1`, [subscriptionId]);
    await insertDelivery(tables.dataSource, { subscriptionId });
    const first = await claim();
    assert.equal(first.length, 1);
    const nineteenth = await tables.attemptRecords.recordAttempt(attemptRecord(first[0]!));
    assert.equal(nineteenth.disabledNow, false);
    const second = await claim();
    assert.equal(second.length, 1, 'still enabled after nineteen');
    const twentieth = await tables.attemptRecords.recordAttempt(
      attemptRecord(second[0]!, { next: { status: 'failed', retryInMs: null } }),
    );
    assert.equal(twentieth.disabledNow, true);
    assert.deepEqual(twentieth.warnings, [{ kind: 'disabled', consecutiveFailures: FAILURES_BEFORE_DISABLE }]);
    const [row] = await tables.dataSource.query(
      `SELECT enabled, disabled_at IS NOT NULL AS disabled FROM webhook_subscription WHERE id = $1`,
      [subscriptionId],
    );
    assert.deepEqual(row, { enabled: false, disabled: true });
    const warnings = await tables.dataSource.query(
      `SELECT kind, consecutive_failures FROM webhook_warning WHERE subscription_id = $1`,
      [subscriptionId],
    );
    assert.deepEqual(warnings, [{ kind: 'disabled', consecutive_failures: FAILURES_BEFORE_DISABLE }]);
  });

  it('raises failing at five consecutive failures and recovered at the next success', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, { consecutiveFailures: 4 });
    await insertDelivery(tables.dataSource, { subscriptionId });
    const [failing] = await claim();
    assert.deepEqual((await tables.attemptRecords.recordAttempt(attemptRecord(failing!))).warnings, [
      { kind: 'failing', consecutiveFailures: 5 },
    ]);
    const [probe] = await claim();
    const recovered = await tables.attemptRecords.recordAttempt(
      attemptRecord(probe!, { succeeded: true, outcome: 200, next: { status: 'succeeded', retryInMs: null } }),
    );
    assert.deepEqual(recovered.warnings, [{ kind: 'recovered', consecutiveFailures: 0 }]);
  });

  it('does not count a failed manual attempt towards disabling', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, {
      consecutiveFailures: FAILURES_BEFORE_DISABLE - 1,
    });
    await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim();
    const recorded = await tables.attemptRecords.recordAttempt(
      attemptRecord(claimed!, { trigger: 'manual', next: { status: 'failed', retryInMs: null } }),
    );
    assert.deepEqual(recorded, { deliveryUpdated: true, disabledNow: false, warnings: [] });
    const [row] = await tables.dataSource.query(
      `SELECT enabled, consecutive_failures FROM webhook_subscription WHERE id = $1`,
      [subscriptionId],
    );
    assert.deepEqual(row, { enabled: true, consecutive_failures: FAILURES_BEFORE_DISABLE - 1 });
  });

  it('drops a retry planned for a subscription deleted while the attempt was in flight', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const id = await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim();
    await tables.dataSource.query(`UPDATE webhook_subscription SET deleted_at = now() WHERE id = $1`, [subscriptionId]);
    await tables.attemptRecords.recordAttempt(attemptRecord(claimed!));
    assert.equal((await deliveryRow(tables.dataSource, id))?.status, 'dropped');
  });

  /** Everything recording leaves behind for one subscription, without ids or times. */
  async function recordedState(subscriptionId: string, deliveryIds: string[]) {
    const [subscription] = await tables.dataSource.query(
      `SELECT consecutive_failures, last_status, enabled, alert_open, disabled_at IS NOT NULL AS disabled
         FROM webhook_subscription WHERE id = $1`,
      [subscriptionId],
    );
    const deliveries = await Promise.all(deliveryIds.map((id) => deliveryRow(tables.dataSource, id)));
    const attempts = await tables.dataSource.query(
      `SELECT array_position($1::text[], delivery_id) AS delivery, outcome, duration_ms, http_status, response_excerpt,
              triggered_by
         FROM webhook_delivery_attempt WHERE delivery_id = ANY($1) ORDER BY id`,
      [deliveryIds],
    );
    const warnings = await tables.dataSource.query(
      `SELECT kind, consecutive_failures FROM webhook_warning WHERE subscription_id = $1 ORDER BY id`,
      [subscriptionId],
    );
    return { subscription, deliveries, attempts, warnings };
  }

  /** A subscription with `count` deliveries claimed at once, then its state set as `alerting`/`failures` say. */
  async function claimedTwin(count: number, state: { failures: number; alerting: boolean }) {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(await insertDelivery(tables.dataSource, { subscriptionId }));
    const claimed = (await claim()).filter((d) => d.subscriptionId === subscriptionId);
    assert.equal(claimed.length, count);
    claimed.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
    await tables.dataSource.query(
      `UPDATE webhook_subscription SET consecutive_failures = $2, alert_open = $3, last_status = '500' WHERE id = $1`,
      [subscriptionId, state.failures, state.alerting],
    );
    return { subscriptionId, ids, claimed };
  }

  it('records a batch of attempts with the same outcome rows as one by one', async () => {
    const success = (d: ClaimedDelivery, outcome: number) =>
      attemptRecord(d, {
        succeeded: true,
        outcome,
        httpStatus: outcome,
        responseExcerpt: `ok ${outcome}`,
        next: { status: 'succeeded', retryInMs: null },
      });
    const failure = (d: ClaimedDelivery) => attemptRecord(d, { next: { status: 'pending', retryInMs: 60_000 } });
    // An alerting subscription whose successes are written together (recovered once, by the first),
    // and a failing one whose mix of failures and successes falls back to one by one.
    const shapes = [
      { state: { failures: 0, alerting: true }, plan: [204, 200, 200, 200] },
      { state: { failures: 4, alerting: false }, plan: [500, 200, 500, 500] },
    ];
    for (const { state, plan } of shapes) {
      const batched = await claimedTwin(plan.length, state);
      const single = await claimedTwin(plan.length, state);
      const records = (claimed: ClaimedDelivery[]) =>
        claimed.map((d, i) => (plan[i] === 500 ? failure(d) : success(d, plan[i]!)));

      const together = await tables.attemptRecords.recordAttempts(records(batched.claimed));
      const apart: AttemptRecorded[] = [];
      for (const record of records(single.claimed)) apart.push(await tables.attemptRecords.recordAttempt(record));

      assert.deepEqual(
        together,
        apart.map((value) => ({ status: 'fulfilled', value })),
        'each attempt reports what it would one by one',
      );
      assert.deepEqual(
        await recordedState(batched.subscriptionId, batched.ids),
        await recordedState(single.subscriptionId, single.ids),
      );
    }
    const warned = await tables.dataSource.query(`SELECT kind, consecutive_failures FROM webhook_warning ORDER BY id`);
    assert.deepEqual(
      warned.map((w: { kind: string }) => w.kind),
      ['recovered', 'recovered', 'failing', 'recovered', 'failing', 'recovered'],
      'the warnings of both ways, in order',
    );
  });

  it('records the successes of several subscriptions in one statement', async () => {
    const first = await claimedTwin(3, { failures: 0, alerting: false });
    const second = await claimedTwin(2, { failures: 0, alerting: false });
    const records = [...first.claimed, ...second.claimed].map((d) =>
      attemptRecord(d, {
        succeeded: true,
        outcome: 200,
        httpStatus: 200,
        next: { status: 'succeeded', retryInMs: null },
      }),
    );
    // The same repository on a database that counts the statements it is sent.
    const counted = { statements: 0 };
    const database = new Database(tables.dataSource);
    const counting: Database = Object.assign(Object.create(database) as Database, {
      sqlConnection: () => {
        const connection = database.sqlConnection();
        return {
          query: (config: QueryArrayConfig) => {
            counted.statements += 1;
            return connection.query(config);
          },
        };
      },
    });
    const recorded = await new AttemptRecordRepository(counting).recordAttempts(records);
    assert.equal(counted.statements, 1, 'one statement wrote all five attempts');
    assert.ok(recorded.every((r) => r.status === 'fulfilled' && r.value.deliveryUpdated));
    for (const { subscriptionId, ids } of [first, second]) {
      const state = await recordedState(subscriptionId, ids);
      assert.deepEqual(state.subscription, {
        consecutive_failures: 0,
        last_status: '200',
        enabled: true,
        alert_open: false,
        disabled: false,
      });
      assert.ok(state.deliveries.every((d) => d?.status === 'succeeded' && d.lease_token === null));
      assert.equal(state.attempts.length, ids.length);
    }
  });

  it('a batch whose lease was lost leaves that delivery alone and records the rest', async () => {
    const { ids, claimed } = await claimedTwin(3, { failures: 0, alerting: false });
    await tables.dataSource.query(`UPDATE webhook_delivery SET lease_token = 'another worker' WHERE id = $1`, [ids[1]]);
    const recorded = await tables.attemptRecords.recordAttempts(
      claimed.map((d) =>
        attemptRecord(d, {
          succeeded: true,
          outcome: 200,
          httpStatus: 200,
          next: { status: 'succeeded', retryInMs: null },
        }),
      ),
    );
    assert.deepEqual(
      recorded.map((r) => r.status === 'fulfilled' && r.value.deliveryUpdated),
      [true, false, true],
    );
    assert.deepEqual(
      (await Promise.all(ids.map((id) => deliveryRow(tables.dataSource, id)))).map((d) => [d?.status, d?.lease_token]),
      [
        ['succeeded', null],
        ['pending', 'another worker'],
        ['succeeded', null],
      ],
    );
    const [logged] = await tables.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_delivery_attempt WHERE delivery_id = ANY($1)`,
      [ids],
    );
    assert.equal(logged.n, 3, 'every attempt made is in the log, the late one too');
  });

  it('a batch whose write fails records none of its attempts: their leases expire and they are claimed again', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const ids = [
      await insertDelivery(tables.dataSource, { subscriptionId }),
      await insertDelivery(tables.dataSource, { subscriptionId }),
    ];
    const claimed = await claim(randomUUID(), { leaseMs: 300 });
    assert.equal(claimed.length, 2);
    // An attempt the attempt log refuses (an HTTP status out of its range) makes it refuse the whole statement.
    const ghost: ClaimedDelivery = { ...claimed[0]!, id: randomUUID() };
    const recorded = await tables.attemptRecords.recordAttempts(
      [...claimed, ghost].map((d) =>
        attemptRecord(d, {
          succeeded: true,
          outcome: 200,
          httpStatus: d === ghost ? 1000 : 200,
          next: { status: 'succeeded', retryInMs: null },
        }),
      ),
    );
    assert.deepEqual(
      recorded.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    const [logged] = await tables.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_delivery_attempt WHERE delivery_id = ANY($1)`,
      [ids],
    );
    assert.equal(logged.n, 0);
    assert.deepEqual(await claim(), [], 'still leased');
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual((await claim()).map((d) => d.id).sort(), [...ids].sort());
  });

  it('moves a delivery out of the queue into its day’s history in the statement that records its final attempt', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const retried = await insertDelivery(tables.dataSource, { subscriptionId });
    const finished = await insertDelivery(tables.dataSource, { subscriptionId });
    const claimed = await claim();
    const byId = new Map(claimed.map((d) => [d.id, d]));
    await tables.attemptRecords.recordAttempt(
      attemptRecord(byId.get(retried)!, { next: { status: 'pending', retryInMs: 60_000 } }),
    );
    await tables.attemptRecords.recordAttempt(
      attemptRecord(byId.get(finished)!, {
        succeeded: true,
        outcome: 200,
        next: { status: 'succeeded', retryInMs: null },
      }),
    );
    const queued = await tables.dataSource.query(`SELECT id FROM webhook_delivery`);
    assert.deepEqual(
      queued.map((row: { id: string }) => row.id),
      [retried],
      'only what is not final stays queued',
    );
    const [moved] = await tables.dataSource.query(
      `SELECT tableoid::regclass::text AS partition, status, attempts, last_status FROM webhook_delivery_history
        WHERE id = $1`,
      [finished],
    );
    assert.deepEqual(moved, {
      partition: `webhook_delivery_history_d${today()}`,
      status: 'succeeded',
      attempts: 1,
      last_status: '200',
    });
  });

  it('never loses an outcome to a day without its partition: the write is refused whole, the day is made, the outcome recorded', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const ids = [
      await insertDelivery(tables.dataSource, { subscriptionId }),
      await insertDelivery(tables.dataSource, { subscriptionId }),
      await insertDelivery(tables.dataSource, { subscriptionId }),
    ];
    // Today's partitions gone, as if the retention job had not run since before today.
    for (const parent of ['webhook_delivery_history', 'webhook_delivery_attempt']) {
      await tables.dataSource.query(`ALTER TABLE ${parent} DETACH PARTITION ${parent}_d${today()}`);
      await tables.dataSource.query(`DROP TABLE ${parent}_d${today()}`);
    }
    const claimed = await claim();
    assert.equal(claimed.length, 3);
    const success = {
      succeeded: true,
      outcome: 200,
      httpStatus: 200,
      next: { status: 'succeeded' as const, retryInMs: null },
    };
    // Two successes of one subscription (one statement for both), then one on its own.
    const together = await tables.attemptRecords.recordAttempts(
      claimed.slice(0, 2).map((d) => attemptRecord(d, success)),
    );
    assert.deepEqual(
      together.map((r) => (r.status === 'fulfilled' ? r.value.deliveryUpdated : r.reason)),
      [true, true],
    );
    assert.equal(
      (await tables.attemptRecords.recordAttempt(attemptRecord(claimed[2]!, success))).deliveryUpdated,
      true,
    );
    const [counts] = await tables.dataSource.query(
      `SELECT (SELECT count(*)::int FROM webhook_delivery) AS queued,
              (SELECT count(*)::int FROM webhook_delivery_history_d${today()} WHERE id = ANY ($1)) AS finished,
              (SELECT count(*)::int FROM webhook_delivery_attempt_d${today()} WHERE delivery_id = ANY ($1)) AS attempts`,
      [ids],
    );
    assert.deepEqual(counts, { queued: 0, finished: 3, attempts: 3 });
  });
  it('writes a routine success to its subscription’s row only once the stored time is ten seconds old', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    for (let i = 0; i < 3; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    const [first, second, third] = await claim();
    const success = {
      succeeded: true,
      outcome: 200,
      httpStatus: 200,
      next: { status: 'succeeded' as const, retryInMs: null },
    };
    // Attempts of the last minute: they land in a day partition that exists (a fixed date stops having one).
    const at = Date.now() - 60_000;
    const stored = async (): Promise<number> => {
      const [row] = await tables.dataSource.query<Array<{ last_success_at: Date }>>(
        `SELECT last_success_at FROM webhook_subscription WHERE id = $1`,
        [subscriptionId],
      );
      return row!.last_success_at.getTime();
    };
    const record = async (delivery: ClaimedDelivery, attemptedAt: number): Promise<void> => {
      const [recorded] = await tables.attemptRecords.recordAttempts([
        attemptRecord(delivery, { ...success, attemptedAt: new Date(attemptedAt) }),
      ]);
      if (recorded!.status === 'rejected') throw recorded!.reason;
    };
    await record(first!, at);
    assert.equal(await stored(), at, 'the first success changes the row');
    await record(second!, at + 9_000);
    assert.equal(await stored(), at, 'nine seconds later, nothing else changed: the row is left as it is');
    await record(third!, at + 10_500);
    assert.equal(await stored(), at + 10_500, 'past ten seconds, the time is written');
  });
});
