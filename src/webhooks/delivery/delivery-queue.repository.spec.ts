import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Client, type Notification, type QueryArrayConfig } from 'pg';
import type { QueryRunner } from 'typeorm';
import { Database } from '../../database/sql/sql-target';
import { eventually } from '../../../test/support/eventually';
import { deliveryRow, insertDelivery, insertSubscription, webhookTables } from '../../../test/support/webhook-rows';
import type { WebhookTables } from '../../../test/support/webhook-rows';
import { DeliveryHistoryRepository } from '../delivery-history.repository';
import { WebhookSubscriptionEntity } from '../entities/webhook-subscription.entity';
import { WebhookSubscriptionRepository } from '../webhook-subscription.repository';
import { OutboxSenderId } from '../outbox/outbox-sender-id';
import { FAILURES_BEFORE_DISABLE } from '../webhook-event-types';
import { AttemptRecordRepository, type AttemptRecord, type AttemptRecorded } from './attempt-record.repository';
import type { ClaimedDelivery } from './claimed-delivery';
import { CLAIM_STATEMENTS, DeliveryClaimRepository } from './delivery-claim.repository';
import { DELIVERY_CHANNEL, DeliveryQueueRepository } from './delivery-queue.repository';

const LIMITS = { maxDeliveries: 64, perSubscription: 4, leaseMs: 60_000 };

/** The queue, the claim and the attempt records on real PostgreSQL: every statement of their repositories. */
describe('DeliveryQueueRepository', () => {
  let tables: WebhookTables;
  let queue: DeliveryQueueRepository;
  let claims: DeliveryClaimRepository;
  let attemptRecords: AttemptRecordRepository;
  const sender = new OutboxSenderId();

  before(async () => {
    tables = await webhookTables();
    queue = new DeliveryQueueRepository(sender);
    claims = new DeliveryClaimRepository(tables.database, tables.unitOfWork);
    attemptRecords = new AttemptRecordRepository(tables.database);
  });
  after(async () => tables.dataSource.destroy());
  beforeEach(async () => {
    await tables.dataSource.query(
      'TRUNCATE webhook_subscription, webhook_delivery, webhook_delivery_history, webhook_delivery_attempt CASCADE',
    );
  });

  const claim = (leaseToken: string = randomUUID(), limits: Partial<typeof LIMITS> = {}): Promise<ClaimedDelivery[]> =>
    claims.claim({ ...LIMITS, ...limits, leaseToken });

  /** The claim's second statement (text, values) as the worker runs it, for the subscriptions step 1 chose. */
  function leasingQuery(chosen: Array<{ id: string }>, leaseToken: string): [string, unknown[]] {
    return [
      CLAIM_STATEMENTS.deliveries.text,
      CLAIM_STATEMENTS.deliveries.values({
        subscriptionIds: chosen.map((row) => row.id),
        perSubscription: LIMITS.perSubscription,
        maxDeliveries: LIMITS.maxDeliveries,
        leaseMs: LIMITS.leaseMs,
        leaseToken,
        rotate: chosen.length >= LIMITS.maxDeliveries,
      }),
    ];
  }

  function attempt(delivery: ClaimedDelivery, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
    return {
      delivery,
      attemptedAt: new Date(),
      outcome: 500,
      durationMs: 12,
      httpStatus: 500,
      responseExcerpt: 'unavailable',
      succeeded: false,
      trigger: 'scheduled',
      next: { status: 'pending', retryInMs: 0 },
      ...overrides,
    };
  }

  it('enqueues pending and skipped deliveries once per fact, and wakes the workers at commit only for pending ones', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const listener = new Client({ connectionString: tables.url });
    await listener.connect();
    const heard: Notification[] = [];
    listener.on('notification', (notification) => heard.push(notification));
    await listener.query(`LISTEN ${DELIVERY_CHANNEL}`);
    try {
      const row = (id: string, status: 'pending' | 'skipped') => ({
        id,
        subscriptionId,
        eventType: 'order.confirmed' as const,
        subjectId: `ord_${status}`,
        payload: Buffer.from('{}'),
        traceId: 'trace',
        status,
      });
      const inserted = await tables.unitOfWork.run((tx) => queue.enqueue([row(randomUUID(), 'pending')], tx));
      assert.equal(inserted, 1);
      const again = await tables.unitOfWork.run((tx) => queue.enqueue([row(randomUUID(), 'pending')], tx));
      assert.equal(again, 0, 'the same fact for the same subscription is not queued twice');
      const skipped = await tables.unitOfWork.run((tx) => queue.enqueue([row(randomUUID(), 'skipped')], tx));
      assert.equal(skipped, 0, 'a skipped delivery is recorded but counts as nothing to send');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(
        heard.map((n) => n.payload),
        [sender.id],
        'one wake-up, signed by this instance',
      );
      const statuses: Array<{ status: string; due: boolean; completed: boolean }> = await tables.dataSource.query(
        `SELECT status, due, completed FROM (
           SELECT seq, status, next_attempt_at IS NOT NULL AS due, false AS completed FROM webhook_delivery
           UNION ALL
           SELECT seq, status, false, completed_at IS NOT NULL FROM webhook_delivery_history) AS d
          ORDER BY seq`,
      );
      assert.deepEqual(statuses, [
        { status: 'pending', due: true, completed: false },
        { status: 'skipped', due: false, completed: true },
      ]);
    } finally {
      await listener.end();
    }
  });

  it('enqueues nothing, and inserts nothing, in a transaction that rolls back', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await assert.rejects(
      tables.unitOfWork.run(async (tx) => {
        await queue.enqueue(
          [
            {
              id: randomUUID(),
              subscriptionId,
              eventType: 'order.confirmed',
              subjectId: 'ord_rolled_back',
              payload: Buffer.from('{}'),
              traceId: 'trace',
              status: 'pending',
            },
          ],
          tx,
        );
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await tables.dataSource.query('SELECT id FROM webhook_delivery'), []);
  });

  it('drops a deleted subscription’s pending deliveries, but leaves a leased one to finish', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const waiting = await insertDelivery(tables.dataSource, { subscriptionId });
    const inFlight = await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'worker' });
    const other = await insertDelivery(tables.dataSource, {
      subscriptionId: await insertSubscription(tables.dataSource),
    });
    await tables.unitOfWork.run((tx) => queue.dropPending(subscriptionId, tx));
    assert.equal((await deliveryRow(tables.dataSource, waiting))?.status, 'dropped');
    assert.equal((await deliveryRow(tables.dataSource, inFlight))?.status, 'pending');
    assert.equal((await deliveryRow(tables.dataSource, other))?.status, 'pending');
  });

  it('claims due deliveries only: not one due later, not one leased to another worker', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const due = await insertDelivery(tables.dataSource, { subscriptionId });
    await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 60 });
    await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'another worker' });
    const claimed = await claim('mine');
    assert.deepEqual(
      claimed.map((d) => [d.id, d.leaseToken, d.url, d.secretSealed]),
      [[due, 'mine', 'https://receiver.example/hook', 'sealed']],
    );
    assert.equal((await deliveryRow(tables.dataSource, due))?.lease_token, 'mine');
    assert.deepEqual(await claim(), [], 'a leased delivery is not claimed again while its lease lasts');
  });

  it('claims at most the per-subscription cap in flight, counting the leases other workers hold', async () => {
    const busy = await insertSubscription(tables.dataSource);
    const quiet = await insertSubscription(tables.dataSource);
    await insertDelivery(tables.dataSource, { subscriptionId: busy, leasedBy: 'another worker' });
    for (let i = 0; i < 6; i += 1) await insertDelivery(tables.dataSource, { subscriptionId: busy });
    await insertDelivery(tables.dataSource, { subscriptionId: quiet });
    const claimed = await claim();
    assert.equal(claimed.filter((d) => d.subscriptionId === busy).length, LIMITS.perSubscription - 1);
    assert.equal(claimed.filter((d) => d.subscriptionId === quiet).length, 1);
    assert.deepEqual(await claim(), [], 'the cap is reached: nothing more until an attempt ends');
  });

  /** Deliveries of a subscription whose lease is valid now. */
  async function inFlight(subscriptionId: string): Promise<number> {
    const [row] = await tables.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM webhook_delivery WHERE subscription_id = $1 AND lease_expires_at > now()`,
      [subscriptionId],
    );
    return row?.n ?? 0;
  }

  it('never exceeds the per-subscription cap, even when older deliveries become due behind the ones in flight', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const older: string[] = [];
    for (let i = 0; i < LIMITS.perSubscription; i += 1)
      older.push(await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 60 }));
    for (let i = 0; i < LIMITS.perSubscription + 2; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    assert.equal((await claim('first worker')).length, LIMITS.perSubscription);

    // The older ones' retry time comes: they now sit at the head of the queue, before every lease.
    await tables.dataSource.query(
      `UPDATE webhook_delivery SET next_attempt_at = now() - interval '1 second'
                                    WHERE id = ANY ($1::text[])`,
      [older],
    );
    assert.deepEqual(await claim('second worker'), [], 'every slot is in flight, wherever its delivery sits');
    assert.equal(await inFlight(subscriptionId), LIMITS.perSubscription);
  });

  it('sends a failing subscription’s probe only once every attempt in flight has ended, wherever they sit in the queue', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const older: string[] = [];
    for (let i = 0; i < LIMITS.perSubscription; i += 1)
      older.push(await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 60 }));
    for (let i = 0; i < LIMITS.perSubscription; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    const sending = await claim('first worker');
    assert.equal(sending.length, LIMITS.perSubscription);

    // The subscription starts failing, and its older deliveries are due again.
    await tables.dataSource.query(`UPDATE webhook_subscription SET consecutive_failures = 1 WHERE id = $1`, [
      subscriptionId,
    ]);
    await tables.dataSource.query(
      `UPDATE webhook_delivery SET next_attempt_at = now() - interval '1 second'
                                    WHERE id = ANY ($1::text[])`,
      [older],
    );
    assert.deepEqual(await claim('second worker'), [], 'no probe while attempts are in flight');

    await claims.releaseLeases(sending.map((d) => ({ id: d.id, leaseToken: d.leaseToken })));
    assert.deepEqual(
      (await claim('second worker')).map((d) => d.id),
      [older[0]],
      'then the oldest alone',
    );
  });

  /** Queue numbers are shared by every subscription: skipping some puts the next delivery far past a position. */
  async function skipQueueNumbers(count: number): Promise<void> {
    await tables.dataSource.query(`SELECT setval('webhook_delivery_seq', nextval('webhook_delivery_seq') + $1)`, [
      count,
    ]);
  }

  async function positionOf(subscriptionId: string): Promise<number> {
    const [row] = await tables.dataSource.query<Array<{ from_seq: string }>>(
      `SELECT from_seq FROM webhook_delivery_turn WHERE subscription_id = $1`,
      [subscriptionId],
    );
    return Number(row?.from_seq);
  }

  async function queueNumberOf(deliveryId: string): Promise<number> {
    const [row] = await tables.dataSource.query<Array<{ seq: string }>>(
      `SELECT seq FROM webhook_delivery WHERE id = $1 UNION ALL SELECT seq FROM webhook_delivery_history WHERE id = $1`,
      [deliveryId],
    );
    return Number(row?.seq);
  }

  it('moves a subscription’s position up to its oldest waiting delivery, and claims from there', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await skipQueueNumbers(5_000);
    const waiting = await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 60 });
    await insertDelivery(tables.dataSource, { subscriptionId });
    assert.equal(await positionOf(subscriptionId), 0);
    assert.equal((await claim()).length, 1);
    assert.equal(
      await positionOf(subscriptionId),
      await queueNumberOf(waiting),
      'up to the oldest waiting, due or not',
    );
  });

  it('never moves a subscription’s position past a delivery being queued: it is claimed once queued', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await skipQueueNumbers(5_000);
    // Its turn exists already (a first delivery's publishers wait for the one that makes it).
    await tables.dataSource.query(`INSERT INTO webhook_delivery_turn (subscription_id) VALUES ($1)`, [subscriptionId]);
    // A publication draws its queue number and holds it, uncommitted, while a later one commits.
    const publishing = tables.dataSource.createQueryRunner();
    await publishing.connect();
    await publishing.startTransaction();
    await publishing.query(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
       VALUES ('held_back', $1, 'order.confirmed', 'held_back', '\\x7b7d', now() - interval '1 second')`,
      [subscriptionId],
    );
    const later = await insertDelivery(tables.dataSource, { subscriptionId });
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      [later],
    );
    await publishing.commitTransaction();
    await publishing.release();
    assert.ok(
      (await claim()).some((d) => d.id === 'held_back'),
      'the delivery queued meanwhile is claimed: the position stayed before it',
    );
  });

  /**
   * Runs a claim whose second statement takes its snapshot while `publish` (a publication's transaction, not
   * yet committed) holds a delivery back, and waits (on the row of `held`, a delivery it leases) until that
   * publication has committed: what the claim then parks or moves, it decides without the held-back delivery.
   */
  async function claimWhilePublishing(
    publish: (publishing: QueryRunner) => Promise<unknown>,
    held: () => Promise<string>,
  ): Promise<string[]> {
    const publishing = tables.dataSource.createQueryRunner();
    const locking = tables.dataSource.createQueryRunner();
    const claiming = tables.dataSource.createQueryRunner();
    for (const runner of [publishing, locking, claiming]) await runner.connect();
    try {
      await publishing.startTransaction();
      await publish(publishing);
      const heldId = await held();
      await locking.startTransaction();
      await locking.query(`SELECT 1 FROM webhook_delivery WHERE id = $1 FOR UPDATE`, [heldId]);
      await claiming.startTransaction();
      const chosen = (await claiming.query(
        CLAIM_STATEMENTS.subscriptions.text,
        CLAIM_STATEMENTS.subscriptions.values({ maxDeliveries: 64, perSubscription: 4 }),
      )) as Array<{ id: string; from_seq: string }>;
      const [claimingBackend] = (await claiming.query(`SELECT pg_backend_pid() AS pid`)) as Array<{ pid: number }>;
      const leasing = claiming.query(...leasingQuery(chosen, 'reading')) as Promise<Array<{ id: string }>>;
      for (;;) {
        const [state] = await tables.dataSource.query<Array<{ waiting: boolean }>>(
          `SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1`,
          [claimingBackend?.pid],
        );
        if (state?.waiting === true) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The publication commits after the statement's snapshot, before the claim locks what it parks or moves.
      await publishing.commitTransaction();
      await locking.commitTransaction();
      const leased = (await leasing).map((row) => row.id);
      await claiming.query(
        CLAIM_STATEMENTS.recheck.text,
        CLAIM_STATEMENTS.recheck.values({
          subscriptionIds: chosen.map((row) => row.id),
          fromSeqs: chosen.map((row) => row.from_seq),
        }),
      );
      await claiming.commitTransaction();
      return leased;
    } finally {
      for (const runner of [publishing, locking, claiming]) await runner.release();
    }
  }

  const publishHeldBack =
    (subscriptionId: string) =>
    (publishing: QueryRunner): Promise<unknown> =>
      publishing.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
         VALUES ('held_back', $1, 'order.confirmed', 'held_back', '\\x7b7d', now() - interval '1 second')`,
        [subscriptionId],
      );

  it('never moves a subscription’s position past a delivery that commits while the claim reads the queue', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await skipQueueNumbers(5_000);
    await tables.dataSource.query(`INSERT INTO webhook_delivery_turn (subscription_id) VALUES ($1)`, [subscriptionId]);
    // The held-back delivery draws its queue number first; a later one commits and is the oldest the claim sees.
    let later = '';
    const leased = await claimWhilePublishing(publishHeldBack(subscriptionId), async () => {
      later = await insertDelivery(tables.dataSource, { subscriptionId });
      return later;
    });
    assert.deepEqual(leased, [later]);
    assert.ok(
      (await claim()).some((d) => d.id === 'held_back'),
      'the delivery that committed meanwhile is claimed: the position is not past it',
    );
  });

  it('never parks a subscription whose delivery commits while the claim reads the queue', async () => {
    const quiet = await insertSubscription(tables.dataSource);
    const busy = await insertSubscription(tables.dataSource);
    await tables.dataSource.query(`INSERT INTO webhook_delivery_turn (subscription_id) VALUES ($1)`, [quiet]);
    const leased = await claimWhilePublishing(publishHeldBack(quiet), () =>
      insertDelivery(tables.dataSource, { subscriptionId: busy }),
    );
    assert.equal(leased.length, 1);
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      ['held_back'],
      'the next claim finds it: the turn is not parked with a delivery waiting',
    );
  });

  it('moves the position back for a delivery recovered into the queue with its old place, and claims it', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const missed = await insertDelivery(tables.dataSource, { subscriptionId, status: 'skipped' });
    await skipQueueNumbers(5_000);
    const newer = await insertDelivery(tables.dataSource, { subscriptionId });
    const first = await claim();
    assert.equal(first.length, 1);
    assert.equal(await positionOf(subscriptionId), await queueNumberOf(newer));
    await claims.releaseLeases(first.map((d) => ({ id: d.id, leaseToken: d.leaseToken })));
    const history = new DeliveryHistoryRepository(tables.database, tables.unitOfWork);
    const recovered = await history.requeueWindow(subscriptionId, { since: new Date(0), until: null }, 10);
    assert.equal(recovered.queued, 1);
    assert.equal(await positionOf(subscriptionId), await queueNumberOf(missed), 'the position moved back to it');
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      [missed],
      'a recovered delivery goes first, alone (replay)',
    );
  });

  it('decides one at a time with the deliveries it leases: a recovery queued between the claim’s two statements goes oldest first, alone', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await tables.dataSource.query(`INSERT INTO webhook_delivery_turn (subscription_id) VALUES ($1)`, [subscriptionId]);
    const claiming = tables.dataSource.createQueryRunner();
    await claiming.connect();
    try {
      await claiming.startTransaction();
      const chosen = (await claiming.query(
        CLAIM_STATEMENTS.subscriptions.text,
        CLAIM_STATEMENTS.subscriptions.values({ maxDeliveries: 64, perSubscription: 4 }),
      )) as Array<{ id: string }>;
      // Meanwhile a recovery queues three missed deliveries again (replayed: one at a time, in order).
      const replayed: string[] = [];
      for (let i = 0; i < 3; i += 1)
        replayed.push(await insertDelivery(tables.dataSource, { subscriptionId, replay: true }));
      const leased = (await claiming.query(...leasingQuery(chosen, 'between'))) as Array<{ id: string }>;
      await claiming.commitTransaction();
      assert.deepEqual(
        leased.map((row) => row.id),
        [replayed[0]],
      );
    } finally {
      await claiming.release();
    }
  });

  it('shares free slots between subscriptions with work: none gets a second slot while another waits for its first', async () => {
    // One subscription with a long backlog that has waited longest, four with a little newer work.
    const backlogged = await insertSubscription(tables.dataSource);
    for (let i = 0; i < 20; i += 1)
      await insertDelivery(tables.dataSource, { subscriptionId: backlogged, dueInSeconds: -600 });
    const others: string[] = [];
    for (let s = 0; s < 4; s += 1) {
      const subscriptionId = await insertSubscription(tables.dataSource);
      others.push(subscriptionId);
      for (let i = 0; i < 2; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    }
    const perSubscription = (claimed: ClaimedDelivery[], id: string): number =>
      claimed.filter((d) => d.subscriptionId === id).length;
    const first = await claim(randomUUID(), { maxDeliveries: 1 });
    assert.equal(perSubscription(first, backlogged), 1, 'one free slot: the work that waited longest');

    const second = await claim(randomUUID(), { maxDeliveries: 4 });
    assert.equal(perSubscription(second, backlogged), 0, 'in flight counts: the backlog waits for its second slot');
    for (const id of others) assert.equal(perSubscription(second, id), 1, 'each of the others gets its first');

    const third = await claim(randomUUID(), { maxDeliveries: 5 });
    assert.equal(perSubscription(third, backlogged), 1, 'a second turn for everyone');
    for (const id of others) assert.equal(perSubscription(third, id), 1);
  });

  it('claims no more than the worker’s free capacity in all', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    for (let i = 0; i < 3; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    assert.equal((await claim(randomUUID(), { maxDeliveries: 2 })).length, 2);
  });

  it('claims a failing subscription’s oldest delivery alone, one probe at a time, and only when it is due', async () => {
    const failing = await insertSubscription(tables.dataSource, { consecutiveFailures: 3 });
    const oldest = await insertDelivery(tables.dataSource, { subscriptionId: failing });
    await insertDelivery(tables.dataSource, { subscriptionId: failing });
    const claimed = await claim();
    assert.deepEqual(
      claimed.map((d) => d.id),
      [oldest],
    );
    assert.deepEqual(await claim(), [], 'nothing else while the probe is in flight');

    const waiting = await insertSubscription(tables.dataSource, { consecutiveFailures: 3 });
    await insertDelivery(tables.dataSource, { subscriptionId: waiting, dueInSeconds: 60 });
    await insertDelivery(tables.dataSource, { subscriptionId: waiting });
    assert.deepEqual(await claim(), [], 'a later due delivery does not jump the backoff of the oldest');
  });

  it('claims nothing of a disabled or deleted subscription', async () => {
    await insertDelivery(tables.dataSource, {
      subscriptionId: await insertSubscription(tables.dataSource, { enabled: false }),
    });
    await insertDelivery(tables.dataSource, {
      subscriptionId: await insertSubscription(tables.dataSource, { deleted: true }),
    });
    assert.deepEqual(await claim(), []);
  });

  it('records an attempt: the attempt log, the subscription’s failure count and the delivery’s next state', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const id = await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim();
    assert.ok(claimed);
    const recorded = await attemptRecords.recordAttempt(
      attempt(claimed, { next: { status: 'pending', retryInMs: 60_000 } }),
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
    const recorded = await attemptRecords.recordAttempt(attempt(claimed, { succeeded: true, outcome: 200 }));
    assert.equal(recorded.deliveryUpdated, false);
    assert.deepEqual(await deliveryRow(tables.dataSource, id), {
      status: 'pending',
      attempts: 0,
      lease_token: 'another worker',
      last_status: null,
    });
  });

  it('disables the subscription at the twentieth consecutive failure, with a warning, and not before', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, {
      consecutiveFailures: FAILURES_BEFORE_DISABLE - 2,
    });
    await tables.dataSource.query(`UPDATE webhook_subscription SET alert_open = true WHERE id = $1`, [subscriptionId]);
    await insertDelivery(tables.dataSource, { subscriptionId });
    const first = await claim();
    assert.equal(first.length, 1);
    const nineteenth = await attemptRecords.recordAttempt(attempt(first[0]!));
    assert.equal(nineteenth.disabledNow, false);
    const second = await claim();
    assert.equal(second.length, 1, 'still enabled after nineteen');
    const twentieth = await attemptRecords.recordAttempt(
      attempt(second[0]!, { next: { status: 'failed', retryInMs: null } }),
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
    assert.deepEqual((await attemptRecords.recordAttempt(attempt(failing!))).warnings, [
      { kind: 'failing', consecutiveFailures: 5 },
    ]);
    const [probe] = await claim();
    const recovered = await attemptRecords.recordAttempt(
      attempt(probe!, { succeeded: true, outcome: 200, next: { status: 'succeeded', retryInMs: null } }),
    );
    assert.deepEqual(recovered.warnings, [{ kind: 'recovered', consecutiveFailures: 0 }]);
  });

  it('does not count a failed manual attempt towards disabling', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, {
      consecutiveFailures: FAILURES_BEFORE_DISABLE - 1,
    });
    await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim();
    const recorded = await attemptRecords.recordAttempt(
      attempt(claimed!, { trigger: 'manual', next: { status: 'failed', retryInMs: null } }),
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
    await attemptRecords.recordAttempt(attempt(claimed!));
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
      attempt(d, {
        succeeded: true,
        outcome,
        httpStatus: outcome,
        responseExcerpt: `ok ${outcome}`,
        next: { status: 'succeeded', retryInMs: null },
      });
    const failure = (d: ClaimedDelivery) => attempt(d, { next: { status: 'pending', retryInMs: 60_000 } });
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

      const together = await attemptRecords.recordAttempts(records(batched.claimed));
      const apart: AttemptRecorded[] = [];
      for (const record of records(single.claimed)) apart.push(await attemptRecords.recordAttempt(record));

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
      attempt(d, { succeeded: true, outcome: 200, httpStatus: 200, next: { status: 'succeeded', retryInMs: null } }),
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
    const recorded = await attemptRecords.recordAttempts(
      claimed.map((d) =>
        attempt(d, { succeeded: true, outcome: 200, httpStatus: 200, next: { status: 'succeeded', retryInMs: null } }),
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
    const recorded = await attemptRecords.recordAttempts(
      [...claimed, ghost].map((d) =>
        attempt(d, {
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

  it('releases only the leases it holds: the deliveries are due again', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const mine = await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'mine' });
    const theirs = await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'theirs' });
    await claims.releaseLeases([
      { id: mine, leaseToken: 'mine' },
      { id: theirs, leaseToken: 'not theirs' },
    ]);
    assert.equal((await deliveryRow(tables.dataSource, mine))?.lease_token, null);
    assert.equal((await deliveryRow(tables.dataSource, theirs))?.lease_token, 'theirs');
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      [mine],
    );
  });

  /** Queues one delivery for the subscription, claims it and records its success: nothing is left queued. */
  async function deliverOne(subscriptionId: string): Promise<void> {
    await insertDelivery(tables.dataSource, { subscriptionId });
    const [claimed] = await claim();
    assert.ok(claimed);
    await attemptRecords.recordAttempt(
      attempt(claimed, { succeeded: true, outcome: 200, next: { status: 'succeeded', retryInMs: null } }),
    );
  }

  /** Today's UTC day as a partition suffix (YYYYMMDD). */
  const today = (): string => new Date().toISOString().slice(0, 10).replaceAll('-', '');

  it('parks the turn of a subscription with nothing queued, and its next delivery brings the turn back at once', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await deliverOne(subscriptionId);
    assert.deepEqual(await claim(), []);
    const turnOf = async () =>
      (
        await tables.dataSource.query(
          `SELECT idle, turn_at > now() AS later FROM webhook_delivery_turn WHERE subscription_id = $1`,
          [subscriptionId],
        )
      )[0];
    assert.deepEqual(await turnOf(), { idle: true, later: true }, 'nothing queued: parked');
    const next = await insertDelivery(tables.dataSource, { subscriptionId });
    assert.deepEqual(await turnOf(), { idle: false, later: false }, 'queued again: its turn is back');
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      [next],
    );
  });

  it('never parks a subscription while a delivery of it is being queued: it is claimed as soon as that commits', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await deliverOne(subscriptionId);
    // A publishing transaction has queued the next delivery and not committed yet when a claim comes by.
    const publisher = new Client({ connectionString: tables.url });
    await publisher.connect();
    try {
      await publisher.query('BEGIN');
      await publisher.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
         VALUES ('queued-meanwhile', $1, 'order.confirmed', 'ord_meanwhile', '\\x7b7d', now())`,
        [subscriptionId],
      );
      assert.deepEqual(await claim(), [], 'not committed yet: nothing to claim');
      await publisher.query('COMMIT');
    } finally {
      await publisher.end();
    }
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      ['queued-meanwhile'],
    );
  });

  it('never parks a subscription re-enabled while the claim reads the turns: it is claimed at once', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, { enabled: false });
    const waiting = await insertDelivery(tables.dataSource, { subscriptionId });
    const subscriptions = new WebhookSubscriptionRepository(
      tables.dataSource.getRepository(WebhookSubscriptionEntity),
      tables.database,
    );
    // The claim's first statement with a pause after its snapshot is taken, before it locks what it parks:
    // the re-enable commits in that pause, as it can in production between the two.
    const original = CLAIM_STATEMENTS.subscriptions.text;
    const paused = original.replace(
      'WHERE t.turn_at <= now()',
      'WHERE t.turn_at <= now() AND (SELECT true FROM pg_sleep(0.3))',
    );
    assert.notEqual(paused, original, 'the pause is placed in the statement');
    const claiming = new Client({ connectionString: tables.url });
    await claiming.connect();
    try {
      const [{ pid }] = (await claiming.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
        { pid: number },
      ];
      const reading = claiming.query(paused, CLAIM_STATEMENTS.subscriptions.values(LIMITS));
      await eventually(async () => {
        const [state] = await tables.dataSource.query<Array<{ sleeping: boolean }>>(
          `SELECT wait_event = 'PgSleep' AS sleeping FROM pg_stat_activity WHERE pid = $1`,
          [pid],
        );
        return state?.sleeping === true ? true : undefined;
      }, 'the claim in its pause');
      await tables.unitOfWork.run((tx) => subscriptions.enable(subscriptionId, tx));
      assert.deepEqual((await reading).rows, [], 'the claim saw the subscription off');
    } finally {
      await claiming.end();
    }
    assert.deepEqual(
      (await claim()).map((d) => d.id),
      [waiting],
      'the next claim sends it: the re-enabled turn was not parked',
    );
  });

  it('looks past turns that find nothing to send: a failing subscription in its backoff does not hide the next one', async () => {
    const failing = await insertSubscription(tables.dataSource, { consecutiveFailures: 2 });
    await insertDelivery(tables.dataSource, { subscriptionId: failing, dueInSeconds: 60 });
    const healthy = await insertSubscription(tables.dataSource);
    const due = await insertDelivery(tables.dataSource, { subscriptionId: healthy });
    // One slot: the failing subscription's turn comes first and finds nothing due; the next turn is taken.
    assert.deepEqual(
      (await claim(randomUUID(), { maxDeliveries: 1 })).map((d) => d.id),
      [due],
    );
  });

  it('writes a lease as a HOT update: the lease columns are in no index, so no index entry is written', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    for (let i = 0; i < 3; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    const client = new Client({ connectionString: tables.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      const chosen = await client.query<{ id: string }>(
        CLAIM_STATEMENTS.subscriptions.text,
        CLAIM_STATEMENTS.subscriptions.values({ maxDeliveries: 64, perSubscription: 4 }),
      );
      const leased = await client.query(...leasingQuery(chosen.rows, 'hot'));
      assert.equal(leased.rowCount, 3);
      // This transaction's own counts: every updated queue row was a heap-only tuple.
      const { rows } = await client.query<{ updated: number; hot: number }>(
        `SELECT pg_stat_get_xact_tuples_updated('webhook_delivery'::regclass)::int AS updated,
                pg_stat_get_xact_tuples_hot_updated('webhook_delivery'::regclass)::int AS hot`,
      );
      assert.deepEqual(rows[0], { updated: 3, hot: 3 });
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
  });

  it('rewrites no turn a claim leaves as it was: with every due turn looked at, each keeps its row version', async () => {
    const subscriptions: string[] = [];
    for (let s = 0; s < 3; s += 1) {
      const subscriptionId = await insertSubscription(tables.dataSource);
      subscriptions.push(subscriptionId);
      for (let i = 0; i < 2; i += 1) await insertDelivery(tables.dataSource, { subscriptionId });
    }
    // A row rewritten gets a new version, and with it the writing transaction's id.
    const versions = async (): Promise<string[]> =>
      (
        await tables.dataSource.query<Array<{ version: string }>>(
          `SELECT xmin::text AS version FROM webhook_delivery_turn WHERE subscription_id = ANY ($1) ORDER BY subscription_id`,
          [subscriptions],
        )
      ).map((row) => row.version);
    // The first claim moves each new turn's position up to its queue (a rewrite, as positions move).
    assert.equal((await claim()).length, 6);
    const positioned = await versions();
    for (const subscriptionId of subscriptions) await insertDelivery(tables.dataSource, { subscriptionId });
    assert.equal((await claim()).length, 3);
    assert.deepEqual(await versions(), positioned, 'leasing wrote the lists of leases, not the turns');

    // More turns due than the claim has room for: the one it looked at goes to the back, rewritten.
    for (const subscriptionId of subscriptions) await insertDelivery(tables.dataSource, { subscriptionId });
    assert.equal((await claim(randomUUID(), { maxDeliveries: 1 })).length, 1);
    const rotated = await versions();
    assert.equal(rotated.filter((version, i) => version !== positioned[i]).length, 1);
  });

  it('moves a delivery out of the queue into its day’s history in the statement that records its final attempt', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const retried = await insertDelivery(tables.dataSource, { subscriptionId });
    const finished = await insertDelivery(tables.dataSource, { subscriptionId });
    const claimed = await claim();
    const byId = new Map(claimed.map((d) => [d.id, d]));
    await attemptRecords.recordAttempt(attempt(byId.get(retried)!, { next: { status: 'pending', retryInMs: 60_000 } }));
    await attemptRecords.recordAttempt(
      attempt(byId.get(finished)!, { succeeded: true, outcome: 200, next: { status: 'succeeded', retryInMs: null } }),
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
    const together = await attemptRecords.recordAttempts(claimed.slice(0, 2).map((d) => attempt(d, success)));
    assert.deepEqual(
      together.map((r) => (r.status === 'fulfilled' ? r.value.deliveryUpdated : r.reason)),
      [true, true],
    );
    assert.equal((await attemptRecords.recordAttempt(attempt(claimed[2]!, success))).deliveryUpdated, true);
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
      const [recorded] = await attemptRecords.recordAttempts([
        attempt(delivery, { ...success, attemptedAt: new Date(attemptedAt) }),
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

  it('makes today’s partition before a publication writes a skipped delivery into it, so the publication never fails for want of one', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, { enabled: false });
    for (const parent of ['webhook_delivery_history', 'webhook_delivery_attempt']) {
      await tables.dataSource.query(`ALTER TABLE ${parent} DETACH PARTITION ${parent}_d${today()}`);
      await tables.dataSource.query(`DROP TABLE ${parent}_d${today()}`);
    }
    const id = randomUUID();
    await tables.unitOfWork.run((tx) =>
      queue.enqueue(
        [
          {
            id,
            subscriptionId,
            eventType: 'order.confirmed',
            subjectId: 'ord_skipped_today',
            payload: Buffer.from('{}'),
            traceId: 'trace',
            status: 'skipped',
          },
        ],
        tx,
      ),
    );
    const [row] = await tables.dataSource.query(
      `SELECT tableoid::regclass::text AS partition, status FROM webhook_delivery_history WHERE id = $1`,
      [id],
    );
    assert.deepEqual(row, { partition: `webhook_delivery_history_d${today()}`, status: 'skipped' });
  });
});
