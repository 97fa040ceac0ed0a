import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { Client } from 'pg';
import type { QueryRunner } from 'typeorm';
import { eventually } from '../../../test/support/eventually';
import { deliveryRow, insertDelivery, insertSubscription } from '../../../test/support/webhook-rows';
import { attemptRecord, CLAIM_LIMITS, claimDue, withWorkerTables } from '../../../test/support/worker-tables';
import { DeliveryHistoryRepository } from '../delivery-history.repository';
import { WebhookSubscriptionEntity } from '../entities/webhook-subscription.entity';
import { WebhookSubscriptionRepository } from '../webhook-subscription.repository';
import type { ClaimedDelivery } from './claimed-delivery';
import { CLAIM_STATEMENTS } from './delivery-claim.repository';

/** The worker's claims on real PostgreSQL: every statement of DeliveryClaimRepository. */
describe('DeliveryClaimRepository', () => {
  const tables = withWorkerTables();

  const claim = (leaseToken?: string, limits?: Partial<typeof CLAIM_LIMITS>): Promise<ClaimedDelivery[]> =>
    claimDue(tables.claims, leaseToken, limits);

  /** The claim's second statement (text, values) as the worker runs it, for the subscriptions step 1 chose. */
  function leasingQuery(chosen: Array<{ id: string }>, leaseToken: string): [string, unknown[]] {
    return [
      CLAIM_STATEMENTS.deliveries.text,
      CLAIM_STATEMENTS.deliveries.values({
        subscriptionIds: chosen.map((row) => row.id),
        perSubscription: CLAIM_LIMITS.perSubscription,
        maxDeliveries: CLAIM_LIMITS.maxDeliveries,
        leaseMs: CLAIM_LIMITS.leaseMs,
        leaseToken,
        rotate: chosen.length >= CLAIM_LIMITS.maxDeliveries,
      }),
    ];
  }

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
    assert.equal(claimed.filter((d) => d.subscriptionId === busy).length, CLAIM_LIMITS.perSubscription - 1);
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
    for (let i = 0; i < CLAIM_LIMITS.perSubscription; i += 1)
      older.push(await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 60 }));
    for (let i = 0; i < CLAIM_LIMITS.perSubscription + 2; i += 1)
      await insertDelivery(tables.dataSource, { subscriptionId });
    assert.equal((await claim('first worker')).length, CLAIM_LIMITS.perSubscription);

    // The older ones' retry time comes: they now sit at the head of the queue, before every lease.
    await tables.dataSource.query(
      `UPDATE webhook_delivery SET next_attempt_at = now() - interval '1 second'
                                    WHERE id = ANY ($1::text[])`,
      [older],
    );
    assert.deepEqual(await claim('second worker'), [], 'every slot is in flight, wherever its delivery sits');
    assert.equal(await inFlight(subscriptionId), CLAIM_LIMITS.perSubscription);
  });

  it('sends a failing subscription’s probe only once every attempt in flight has ended, wherever they sit in the queue', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const older: string[] = [];
    for (let i = 0; i < CLAIM_LIMITS.perSubscription; i += 1)
      older.push(await insertDelivery(tables.dataSource, { subscriptionId, dueInSeconds: 60 }));
    for (let i = 0; i < CLAIM_LIMITS.perSubscription; i += 1)
      await insertDelivery(tables.dataSource, { subscriptionId });
    const sending = await claim('first worker');
    assert.equal(sending.length, CLAIM_LIMITS.perSubscription);

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

    await tables.claims.releaseLeases(sending.map((d) => ({ id: d.id, leaseToken: d.leaseToken })));
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
    await tables.claims.releaseLeases(first.map((d) => ({ id: d.id, leaseToken: d.leaseToken })));
    const history = new DeliveryHistoryRepository(tables.database, tables.unitOfWork);
    const recovered = await history.requeueWindow(subscriptionId, { since: new Date(0), until: null }, 10, {
      refuseDisabled: true,
    });
    assert.equal(typeof recovered === 'string' ? recovered : recovered.queued, 1);
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

  it('releases only the leases it holds: the deliveries are due again', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const mine = await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'mine' });
    const theirs = await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'theirs' });
    await tables.claims.releaseLeases([
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
    await tables.attemptRecords.recordAttempt(
      attemptRecord(claimed, { succeeded: true, outcome: 200, next: { status: 'succeeded', retryInMs: null } }),
    );
  }

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
      const reading = claiming.query(paused, CLAIM_STATEMENTS.subscriptions.values(CLAIM_LIMITS));
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
});
