import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { eventually } from '../../test/support/eventually';
import { deliveryRow, insertDelivery, insertSubscription, webhookTables } from '../../test/support/webhook-rows';
import type { WebhookTables } from '../../test/support/webhook-rows';
import { DeliveryClaimRepository } from './delivery/delivery-claim.repository';
import { DeliveryHistoryRepository } from './delivery-history.repository';
import { DeliveryPartitionsRepository } from './delivery-partitions.repository';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';

const LEASE = { leaseMs: 60_000, leaseToken: 'resend', force: false, maxInFlight: 4 };

/** The operations' side of the deliveries on real PostgreSQL: every statement of DeliveryHistoryRepository. */
describe('DeliveryHistoryRepository', () => {
  let tables: WebhookTables;
  let history: DeliveryHistoryRepository;

  before(async () => {
    tables = await webhookTables();
    history = new DeliveryHistoryRepository(tables.database, tables.unitOfWork);
  });
  after(async () => tables.dataSource.destroy());
  beforeEach(async () => {
    await tables.dataSource.query(
      'TRUNCATE webhook_subscription, webhook_delivery, webhook_delivery_history, webhook_delivery_attempt CASCADE',
    );
  });

  it('lists a subscription’s deliveries newest first, each with its attempt log oldest first', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const older = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    const newer = await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 30 });
    await insertDelivery(tables.dataSource, { subscriptionId: await insertSubscription(tables.dataSource) });
    await tables.dataSource.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms, triggered_by)
       VALUES ($1, now() - interval '2 minutes', '500', 10, 'scheduled'), ($1, now(), 'timeout', 20, 'manual')`,
      [older],
    );
    const rows = await history.listForSubscription(subscriptionId, 10);
    assert.deepEqual(
      rows.map((row) => [row.id, row.status, row.nextAttemptAt !== null]),
      [
        [newer, 'pending', true],
        [older, 'failed', false],
      ],
    );
    assert.deepEqual(
      rows[1]?.attemptLog.map((a) => [a.outcome, a.durationMs, a.trigger]),
      [
        ['500', 10, 'scheduled'],
        ['timeout', 20, 'manual'],
      ],
    );
    assert.deepEqual(
      (await history.listForSubscription(subscriptionId, 1)).map((row) => row.id),
      [newer],
    );
    assert.deepEqual(
      (await history.listForSubscription(subscriptionId, 10, { onlyDeliveryId: older })).map((row) => row.id),
      [older],
    );
  });

  it('shows a delivery waiting behind a failing or replaying subscription’s probe as due no sooner than the probe, and one of a disabled subscription as due never', async () => {
    const due = async (subscriptionId: string) =>
      new Map(
        (await history.listForSubscription(subscriptionId, 10)).map((row) => [row.id, row.nextAttemptAt?.getTime()]),
      );
    const failing = await insertSubscription(tables.dataSource, { consecutiveFailures: 3 });
    const probe = await insertDelivery(tables.dataSource, { subscriptionId: failing, dueInSeconds: 600 });
    const waiting = await insertDelivery(tables.dataSource, { subscriptionId: failing, dueInSeconds: -60 });
    const later = await insertDelivery(tables.dataSource, { subscriptionId: failing, dueInSeconds: 1_200 });
    const shown = await due(failing);
    assert.ok(shown.get(probe)! > Date.now() + 590_000, 'the probe keeps its own backoff');
    assert.equal(shown.get(waiting), shown.get(probe), 'one due already waits for the probe');
    assert.ok(shown.get(later)! > shown.get(probe)!, 'one due after the probe keeps its own time');

    await tables.dataSource.query('UPDATE webhook_subscription SET consecutive_failures = 0 WHERE id = $1', [failing]);
    assert.ok((await due(failing)).get(waiting)! < Date.now(), 'a healthy subscription sends it as soon as it is due');

    const disabled = await insertSubscription(tables.dataSource, { enabled: false });
    const held = await insertDelivery(tables.dataSource, { subscriptionId: disabled, dueInSeconds: -60 });
    assert.equal((await due(disabled)).get(held), undefined, 'a disabled subscription sends nothing: no next attempt');

    const replaying = await insertSubscription(tables.dataSource);
    const first = await insertDelivery(tables.dataSource, {
      subscriptionId: replaying,
      replay: true,
      dueInSeconds: 30,
    });
    const second = await insertDelivery(tables.dataSource, { subscriptionId: replaying, replay: true });
    const replayed = await due(replaying);
    assert.equal(replayed.get(second), replayed.get(first), 'a recovery is sent one at a time, oldest first');
  });

  it('pages the log: olderThanId gives the deliveries before that one, across the queue and the history, and none for another subscription’s delivery', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const oldest = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    const middle = await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 30 });
    const newest = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    const foreign = await insertDelivery(tables.dataSource, {
      subscriptionId: await insertSubscription(tables.dataSource),
    });
    const page = async (olderThanId: string, limit = 10) =>
      (await history.listForSubscription(subscriptionId, limit, { olderThanId })).map((row) => row.id);
    assert.deepEqual(await page(newest), [middle, oldest]);
    assert.deepEqual(await page(newest, 1), [middle]);
    assert.deepEqual(await page(middle), [oldest]);
    assert.deepEqual(await page(oldest), []);
    assert.deepEqual(await page(foreign), [], 'another subscription’s delivery anchors nothing');
  });

  it('leases a final delivery for a resend: pending under a lease, on a fresh schedule, with its subscription’s secrets', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const id = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    await tables.dataSource.query(`UPDATE webhook_delivery_history SET attempts = 7 WHERE id = $1`, [id]);
    const leased = await history.leaseForResend(subscriptionId, id, LEASE);
    assert.ok(leased !== null && typeof leased !== 'string');
    assert.deepEqual(
      [leased.id, leased.attempts, leased.retryFrom, leased.leaseToken, leased.secretSealed],
      [id, 7, 7, 'resend', 'sealed'],
    );
    assert.equal((await deliveryRow(tables.dataSource, id))?.status, 'pending');
  });

  it('counts a resend in flight towards its subscription’s cap: claims send at most three more while it lasts', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const resent = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    for (let i = 0; i < 6; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    assert.ok((await history.leaseForResend(subscriptionId, resent, LEASE)) !== null);
    const claims = new DeliveryClaimRepository(tables.database, tables.unitOfWork);
    const claimed = await claims.claim({
      maxDeliveries: 64,
      perSubscription: 4,
      leaseMs: 60_000,
      leaseToken: 'worker',
    });
    assert.equal(claimed.length, 3);
    assert.ok(claimed.every((delivery) => delivery.id !== resent));
  });

  it('holds a resend to its subscription’s cap, as a claim is held: refused at 4 in flight, or at one while failing', async () => {
    const statusOf = async (id: string) => (await deliveryRow(tables.dataSource, id))?.status;
    const full = await insertSubscription(tables.dataSource);
    const final = await insertDelivery(tables.dataSource, { subscriptionId: full, status: 'succeeded' });
    for (let i = 0; i < 4; i += 1)
      await insertDelivery(tables.dataSource, { subscriptionId: full, leasedBy: 'worker' });
    assert.equal(await history.leaseForResend(full, final, LEASE), 'busy');
    assert.equal(await statusOf(final), 'succeeded', 'a refused resend leaves the delivery as it was');

    const failing = await insertSubscription(tables.dataSource, { consecutiveFailures: 3 });
    const failed = await insertDelivery(tables.dataSource, { subscriptionId: failing, status: 'failed' });
    await insertDelivery(tables.dataSource, { subscriptionId: failing, leasedBy: 'worker' });
    assert.equal(await history.leaseForResend(failing, failed, LEASE), 'busy', 'one probe at a time');
    // A lease that expired is no longer in flight (a crashed worker's): the resend is the one probe.
    await tables.dataSource.query(
      `UPDATE webhook_delivery SET lease_expires_at = now() - interval '1 second' WHERE subscription_id = $1`,
      [failing],
    );
    const leased = await history.leaseForResend(failing, failed, LEASE);
    assert.ok(leased !== null && typeof leased !== 'string', `leased: ${JSON.stringify(leased)}`);
    assert.equal(await history.leaseForResend(failing, failed, LEASE), 'busy');
  });

  /**
   * Runs `operation` while a deletion of the subscription is under way (the row locked FOR UPDATE and marked
   * deleted, as SOFT_DELETE does), waits until the operation waits for that lock, then commits the deletion;
   * what the operation answered.
   */
  async function besideADeletion<T>(subscriptionId: string, operation: () => Promise<T>, what: string): Promise<T> {
    const deleting = tables.dataSource.createQueryRunner();
    await deleting.connect();
    try {
      await deleting.startTransaction();
      await deleting.query(`SELECT id FROM webhook_subscription WHERE id = $1 FOR UPDATE`, [subscriptionId]);
      await deleting.query(`UPDATE webhook_subscription SET deleted_at = now(), enabled = false WHERE id = $1`, [
        subscriptionId,
      ]);
      const answer = operation();
      await eventually(async () => {
        const [waits] = await tables.dataSource.query<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return (waits?.n ?? 0) > 0 ? true : undefined;
      }, `the ${what} to wait for the deletion’s lock`);
      await deleting.commitTransaction();
      return await answer;
    } finally {
      await deleting.release();
    }
  }

  it('refuses a resend once a deletion it waited for commits: the lease locks the subscription against it', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const final = await insertDelivery(tables.dataSource, { subscriptionId, status: 'succeeded' });
    const leased = await besideADeletion(
      subscriptionId,
      () => history.leaseForResend(subscriptionId, final, LEASE),
      'resend',
    );
    assert.equal(leased, 'deleted');
    assert.equal(
      (await deliveryRow(tables.dataSource, final))?.status,
      'succeeded',
      'nothing is sent after the delete',
    );
  });

  it('refuses a recovery once a deletion it waited for commits: nothing is queued for a deleted subscription', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const skipped = await insertDelivery(tables.dataSource, { subscriptionId, status: 'skipped' });
    const window = { since: new Date(Date.now() - 3_600_000), until: null };
    const recovered = await besideADeletion(
      subscriptionId,
      () => history.requeueWindow(subscriptionId, window, 10, { refuseDisabled: true }),
      'recovery',
    );
    assert.equal(recovered, 'deleted');
    assert.equal((await deliveryRow(tables.dataSource, skipped))?.status, 'skipped', 'nothing queued after the delete');
  });

  it('refuses a recovery of a subscription disabled since the request read it, unless a re-enable asks for it', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const failed = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    await tables.dataSource.query(`UPDATE webhook_subscription SET enabled = false WHERE id = $1`, [subscriptionId]);
    const window = { since: new Date(Date.now() - 3_600_000), until: null };
    assert.equal(await history.requeueWindow(subscriptionId, window, 10, { refuseDisabled: true }), 'disabled');
    assert.equal((await deliveryRow(tables.dataSource, failed))?.status, 'failed');
    assert.deepEqual(await history.requeueWindow(subscriptionId, window, 10, { refuseDisabled: false }), {
      queued: 1,
      remaining: 0,
    });
  });

  it('refuses a resend without force to a subscription disabled since the request read it, and leases it with force', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const final = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed' });
    await tables.dataSource.query(`UPDATE webhook_subscription SET enabled = false WHERE id = $1`, [subscriptionId]);
    assert.equal(await history.leaseForResend(subscriptionId, final, LEASE), 'disabled');
    assert.equal((await deliveryRow(tables.dataSource, final))?.status, 'failed');
    const forced = await history.leaseForResend(subscriptionId, final, { ...LEASE, force: true });
    assert.ok(forced !== null && typeof forced !== 'string', `leased: ${JSON.stringify(forced)}`);
  });

  it('refuses to lease a pending delivery for a resend, and knows no other subscription’s delivery', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const pending = await insertDelivery(tables.dataSource, { subscriptionId });
    const final = await insertDelivery(tables.dataSource, { subscriptionId, status: 'succeeded' });
    assert.equal(await history.leaseForResend(subscriptionId, pending, LEASE), 'pending');
    const other = await insertSubscription(tables.dataSource);
    assert.equal(await history.leaseForResend(other, final, LEASE), null);
    assert.equal(await history.leaseForResend(subscriptionId, 'no-such-delivery', LEASE), null);
    assert.equal((await deliveryRow(tables.dataSource, final))?.status, 'succeeded');
  });

  it('a re-enable’s recovery takes every delivery skipped since the disabling mark, however old, and none skipped before it', async () => {
    const subscriptions = new WebhookSubscriptionRepository(
      tables.dataSource.getRepository(WebhookSubscriptionEntity),
      tables.database,
    );
    const subscriptionId = await insertSubscription(tables.dataSource);
    const earlier = await insertDelivery(tables.dataSource, { subscriptionId, status: 'skipped' });
    // Disabled as the disabling attempt does (RECORD_ATTEMPT): a time, and a queue number drawn then.
    await tables.dataSource.query(
      `UPDATE webhook_subscription
          SET enabled = false, disabled_at = now() + interval '1 hour', disabled_seq = nextval('webhook_delivery_seq')
        WHERE id = $1`,
      [subscriptionId],
    );
    // Created before disabled_at (its publication began earlier), skipped after the disable.
    const late = await insertDelivery(tables.dataSource, { subscriptionId, status: 'skipped' });
    const enabled = await tables.unitOfWork.run((tx) => subscriptions.enable(subscriptionId, tx));
    assert.ok(enabled?.disabledSince != null && enabled.skippedAfterSeq !== null);
    const window = { since: enabled.disabledSince, until: null, skippedAfterSeq: enabled.skippedAfterSeq };
    assert.deepEqual(await history.requeueWindow(subscriptionId, window, 10, { refuseDisabled: false }), {
      queued: 1,
      remaining: 0,
    });
    assert.equal((await deliveryRow(tables.dataSource, late))?.status, 'pending');
    assert.equal((await deliveryRow(tables.dataSource, earlier))?.status, 'skipped', 'skipped before it was disabled');
  });

  it('recovers a window [since, until): final unsuccessful deliveries only, oldest first, at most the limit', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const before = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', createdDaysAgo: 5 });
    const first = await insertDelivery(tables.dataSource, { subscriptionId, status: 'skipped', createdDaysAgo: 3 });
    const second = await insertDelivery(tables.dataSource, { subscriptionId, status: 'dropped', createdDaysAgo: 2.5 });
    const third = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', createdDaysAgo: 2 });
    const succeeded = await insertDelivery(tables.dataSource, {
      subscriptionId,
      status: 'succeeded',
      createdDaysAgo: 2,
    });
    const atUntil = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', createdDaysAgo: 1 });
    const [{ since, until }] = await tables.dataSource.query(
      `SELECT (SELECT created_at FROM webhook_delivery_history WHERE id = $1) AS since,
              (SELECT created_at FROM webhook_delivery_history WHERE id = $2) AS until`,
      [first, atUntil],
    );
    assert.deepEqual(await history.requeueWindow(subscriptionId, { since, until }, 2, { refuseDisabled: true }), {
      queued: 2,
      remaining: 1,
    });
    const statusOf = async (id: string) => (await deliveryRow(tables.dataSource, id))?.status;
    assert.deepEqual(
      [await statusOf(first), await statusOf(second), await statusOf(third)],
      ['pending', 'pending', 'failed'],
    );
    assert.deepEqual(await history.requeueWindow(subscriptionId, { since, until }, 2, { refuseDisabled: true }), {
      queued: 1,
      remaining: 0,
    });
    assert.equal(await statusOf(before), 'failed', 'before `since` is outside the window');
    assert.equal(await statusOf(atUntil), 'failed', '`until` itself is outside the window');
    assert.equal(await statusOf(succeeded), 'succeeded');
    assert.deepEqual(
      await history.requeueWindow(subscriptionId, { since, until: null }, 10, { refuseDisabled: true }),
      {
        queued: 1,
        remaining: 0,
      },
    );
    assert.equal(await statusOf(atUntil), 'pending', 'no `until`: up to now');
    const [replay] = await tables.dataSource.query(
      `SELECT bool_and(replay) AS all FROM webhook_delivery WHERE status = 'pending'`,
    );
    assert.equal(replay.all, true, 'recovered deliveries are replayed in order');
  });

  it('runs recoveries of one subscription one at a time: concurrent ones queue each delivery once and never count another’s as remaining', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    for (let i = 0; i < 5; i += 1) {
      await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', createdDaysAgo: 1 });
    }
    const since = new Date(Date.now() - 2 * 86_400_000);
    // Another recovery of the subscription, mid-way: this one waits for it.
    const other = tables.dataSource.createQueryRunner();
    await other.connect();
    try {
      await other.startTransaction();
      await other.query(`SELECT pg_advisory_xact_lock(hashtext('webhook recovery'), hashtext($1))`, [subscriptionId]);
      const waiting = history.requeueWindow(subscriptionId, { since, until: null }, 10, { refuseDisabled: true });
      const first = await Promise.race([waiting, new Promise((resolve) => setTimeout(() => resolve('waiting'), 300))]);
      assert.equal(first, 'waiting', 'a recovery waits while another of the subscription runs');
      await other.commitTransaction();
      assert.deepEqual(await waiting, { queued: 5, remaining: 0 });
    } finally {
      if (other.isTransactionActive) await other.rollbackTransaction();
      await other.release();
    }

    // The queue is emptied, and five more failed deliveries wait to be recovered.
    await tables.dataSource.query('DELETE FROM webhook_delivery WHERE subscription_id = $1', [subscriptionId]);
    for (let i = 0; i < 5; i += 1) {
      await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', createdDaysAgo: 1 });
    }
    const answers = (
      await Promise.all(
        Array.from({ length: 6 }, () =>
          history.requeueWindow(subscriptionId, { since, until: null }, 10, { refuseDisabled: true }),
        ),
      )
    ).map(queuedCounts);
    assert.equal(
      answers.reduce((sum, answer) => sum + answer.queued, 0),
      5,
      'each delivery is queued once',
    );
    assert.deepEqual(
      answers.map((answer) => answer.remaining),
      answers.map(() => 0),
      'none counts what another is queueing',
    );
  });

  it('purges final deliveries completed before the retention period, never a pending one, by whole days', async () => {
    const partitions = new DeliveryPartitionsRepository(tables.database);
    const subscriptionId = await insertSubscription(tables.dataSource);
    const old = [
      await insertDelivery(tables.dataSource, { subscriptionId, status: 'succeeded', completedDaysAgo: 40 }),
      await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', completedDaysAgo: 31 }),
    ];
    const recent = await insertDelivery(tables.dataSource, { subscriptionId, status: 'failed', completedDaysAgo: 29 });
    const pending = await insertDelivery(tables.dataSource, { subscriptionId, createdDaysAgo: 90 });
    const dropped = await partitions.dropExpired(30);
    assert.equal(dropped.deliveries, 2);
    assert.ok(dropped.partitions >= 4, 'two days of history and of attempts');
    assert.equal((await partitions.dropExpired(30)).partitions, 0);
    for (const id of old) assert.equal(await deliveryRow(tables.dataSource, id), undefined);
    assert.equal((await deliveryRow(tables.dataSource, recent))?.status, 'failed');
    assert.equal((await deliveryRow(tables.dataSource, pending))?.status, 'pending');
  });
});

/** A recovery's counts; fails the test when it was refused. */
function queuedCounts(answer: { queued: number; remaining: number } | 'deleted' | 'disabled'): {
  queued: number;
  remaining: number;
} {
  assert.ok(typeof answer !== 'string', `refused: ${JSON.stringify(answer)}`);
  return answer;
}
