/**
 * The worker's hot path in: the claim of due deliveries, fair between
 * subscriptions, and the leases it makes (given back here too, at shutdown).
 * Every wake of every instance's worker runs it, so it stands apart from the
 * API's writes and the attempts' records: what its statements read must not
 * grow with the backlog, which test/webhook-claim-cost.e2e-spec.ts checks on
 * CLAIM_STATEMENTS.
 */

import { Injectable } from '@nestjs/common';
import { sql, sqlText } from '../../database/sql/sql-fragment';
import { defineStatement } from '../../database/sql/sql-statement';
import { Database } from '../../database/sql/sql-target';
import { UnitOfWork } from '../../database/unit-of-work';
import { CLAIMED_COLUMNS, claimedDelivery, type ClaimedDelivery, type ClaimedRow } from './claimed-delivery';
import { COMMIT_WITHOUT_FLUSH, newestList } from './delivery-fragments';

export interface ClaimLimits {
  /** At most this many deliveries in all (the worker's free capacity). */
  maxDeliveries: number;
  /** At most this many attempts in flight per subscription at once. */
  perSubscription: number;
  leaseMs: number;
  leaseToken: string;
}

/**
 * How far (in queue numbers, shared by all subscriptions) a subscription's
 * oldest waiting delivery must be past its position before a claim moves the
 * position up: moving it locks the subscription against new deliveries for
 * the rest of the claim, so it is done now and then, not on every claim.
 */
const POSITION_STEP = sqlText('1000');

/** How long a subscription found with nothing queued (or disabled) is left out of the claims' turns. */
const PARKED_FOR = sqlText(`interval '10 seconds'`);

/** A claim's subscription, in CLAIM_DELIVERIES. */
const SUB_ID = sqlText('sub.id');

/**
 * Step 1 of a claim (see claim): the subscriptions whose turn it is, least
 * recently looked at first, locked with their turns. Reads the small table
 * of turns (one row per subscription with something queued) and the
 * subscriptions, never the queue: what it reads does not grow with the
 * backlog. A disabled or deleted subscription's turn is parked (and brought
 * back by enable or the next delivery queued). `perSubscription` is not
 * needed to choose: step 2 applies the caps.
 */
const CLAIM_SUBSCRIPTIONS = defineStatement<
  { maxDeliveries: number; perSubscription: number },
  { id: string; from_seq: string }
>(
  (p) => sql`WITH candidates AS (
      SELECT t.subscription_id, t.turn_at, s.enabled AND s.deleted_at IS NULL AS sendable
        FROM webhook_delivery_turn t JOIN webhook_subscription s ON s.id = t.subscription_id
       WHERE t.turn_at <= now()
       ORDER BY t.turn_at, t.subscription_id
       LIMIT ${p.maxDeliveries}
    ), parked AS (
      -- Only a turn as this statement's snapshot saw it: a re-enable that commits after the snapshot moves the
      -- turn's turn_at (ENABLE, webhook-subscription.repository.ts), and the lock's recheck of the newer row
      -- then leaves it alone instead of parking it for PARKED_FOR.
      UPDATE webhook_delivery_turn t SET turn_at = now() + ${PARKED_FOR}, idle = true
        FROM (SELECT l.subscription_id FROM webhook_delivery_turn l
               WHERE (l.subscription_id, l.turn_at) IN
                     (SELECT c.subscription_id, c.turn_at FROM candidates c WHERE NOT c.sendable)
                 FOR UPDATE SKIP LOCKED) off
       WHERE t.subscription_id = off.subscription_id
    )
    SELECT s.id, t.from_seq, ${COMMIT_WITHOUT_FLUSH} AS commit_without_flush
      FROM candidates c JOIN webhook_subscription s ON s.id = c.subscription_id
      JOIN webhook_delivery_turn t ON t.subscription_id = c.subscription_id
     WHERE c.sendable AND s.enabled AND s.deleted_at IS NULL
     ORDER BY c.turn_at, c.subscription_id
     -- The turn is locked with the subscription: the subscription's list of leases (see CLAIM_DELIVERIES)
     -- is read and replaced by the holder of both locks only.
     FOR NO KEY UPDATE OF s, t SKIP LOCKED`,
  { prepared: true },
);

/**
 * Step 2 of a claim: with each subscription and its turn locked, what is in
 * flight and what may go.
 *
 * In flight is counted exactly, from the subscription's newest list of the
 * deliveries leased for it (newestList): every lease is made here or by a
 * resend (LEASE_FOR_RESEND in delivery-history.repository.ts), and written
 * to a new list in the statement that makes it, so a delivery whose lease is
 * still valid is always on its subscription's newest list. The listed
 * deliveries are read by primary key (a few rows, whatever the backlog), and
 * a subscription that leases gets a new list, what is still leased plus what
 * this claim leases, in place of the one read. The lease columns are in no
 * index (a lease is a HOT update, see migration DeliveryQueueAndHistory),
 * which is why leases are not found by an index of their own.
 *
 * Then the head of each queue, from the subscription's position, oldest
 * first, skipping what is leased or waiting for its retry, up to the
 * subscription's free slots: a failing or replaying subscription sends only
 * its oldest pending delivery, when it is due and nothing of it is in flight
 * (one probe at a time, on the backoff schedule). The free slots are dealt
 * out in turns and the leases written by primary key. The turns looked at
 * move to the back when step 1 had less room than turns due (`rotate`); one
 * with nothing queued at all is parked.
 */
const CLAIM_DELIVERIES = defineStatement<
  {
    subscriptionIds: string[];
    perSubscription: number;
    maxDeliveries: number;
    leaseMs: number;
    leaseToken: string;
    /** Step 1 took as many turns as it could: more may be due, so the ones looked at go to the back. */
    rotate: boolean;
  },
  ClaimedRow
>(
  (p) => sql`WITH sub AS (
      SELECT * FROM unnest(${p.subscriptionIds}::text[]) AS sub(id)
    ), list AS (
      SELECT sub.id AS subscription_id, l.n, l.in_flight FROM sub CROSS JOIN LATERAL (${newestList(SUB_ID)}) l
    ), flight AS (
      -- By primary key, one list at a time: a join could read the whole queue for the lease's sake.
      SELECT list.subscription_id, x.id
        FROM list CROSS JOIN LATERAL (
              SELECT x.id FROM webhook_delivery x
               WHERE x.id = ANY (list.in_flight) AND x.lease_expires_at > now()) x
    ), busy AS (
      -- One at a time (serial) for a failing subscription, or one replaying a recovery: decided here, in
      -- the snapshot that finds the deliveries it leases (a recovery committed since step 1 is seen).
      SELECT sub.id AS subscription_id, t.from_seq,
             s.consecutive_failures > 0 OR EXISTS (
               SELECT 1 FROM webhook_delivery r
                WHERE r.subscription_id = sub.id AND r.status = 'pending' AND r.replay) AS serial,
             (SELECT count(*) FROM flight WHERE flight.subscription_id = sub.id)::int AS n
        FROM sub JOIN webhook_delivery_turn t ON t.subscription_id = sub.id
        JOIN webhook_subscription s ON s.id = sub.id
    ), head AS (
      SELECT busy.subscription_id, busy.serial, busy.n AS busy, h.*
        FROM busy CROSS JOIN LATERAL (
              SELECT x.id, x.seq, x.next_attempt_at
                FROM webhook_delivery x
               WHERE x.subscription_id = busy.subscription_id AND x.status = 'pending' AND x.seq >= busy.from_seq
                 AND x.next_attempt_at <= now() AND (x.lease_expires_at IS NULL OR x.lease_expires_at <= now())
               ORDER BY x.seq
               LIMIT greatest(CASE WHEN busy.serial THEN 1 ELSE ${p.perSubscription} END - busy.n, 0)) h
    ), oldest AS (
      -- Each subscription's oldest waiting delivery: a failing or replaying subscription sends it only;
      -- none at all means nothing is queued; and the position moves up to it (see moved).
      SELECT busy.subscription_id, o.seq
        FROM busy CROSS JOIN LATERAL (
             SELECT x.seq FROM webhook_delivery x
              WHERE x.subscription_id = busy.subscription_id AND x.status = 'pending' AND x.seq >= busy.from_seq
              ORDER BY x.seq LIMIT 1) o
    ), free AS (
      SELECT head.id, head.subscription_id, head.next_attempt_at, head.busy,
             row_number() OVER (PARTITION BY head.subscription_id ORDER BY head.seq) AS turn
        FROM head LEFT JOIN oldest ON oldest.subscription_id = head.subscription_id
       WHERE NOT head.serial OR head.seq = oldest.seq
    ), picked AS (
      SELECT free.id, free.subscription_id FROM free
       -- Free slots are dealt out in turns: every subscription with work gets its next slot
       -- (counting what it already has in flight) before any gets one more.
       ORDER BY free.busy + free.turn, free.next_attempt_at
       LIMIT ${p.maxDeliveries}
    ), emptied AS (
      -- Found with nothing queued. Parked only when no delivery is being queued for it right now: an
      -- insert holds KEY SHARE on the subscription (its foreign key) from the insert to its commit, which
      -- FOR UPDATE waits for, here skips. One that starts after this lock waits for this commit, and its
      -- trigger then sees the parked turn and brings it back. One that committed since this statement's
      -- snapshot is not in it: the claim's next statement (RECHECK_TURNS) finds it and brings the turn back.
      SELECT s.id FROM webhook_subscription s
       WHERE s.id IN (SELECT busy.subscription_id FROM busy WHERE busy.n = 0)
         AND NOT EXISTS (SELECT 1 FROM head WHERE head.subscription_id = s.id)
         AND NOT EXISTS (SELECT 1 FROM oldest WHERE oldest.subscription_id = s.id)
         FOR UPDATE SKIP LOCKED
    ), moved AS (
      -- The position moves up to the oldest waiting delivery once it is well behind, and only while no
      -- delivery of the subscription is being queued (as for emptied): one whose number was drawn
      -- before this snapshot but not yet visible in it would otherwise be left behind the position.
      -- One queued after this lock draws a greater number; one that waits for it moves the position
      -- back (the queueing trigger); one that committed since this statement's snapshot is found by
      -- RECHECK_TURNS, which moves the position back to it.
      SELECT s.id, oldest.seq FROM webhook_subscription s
        JOIN oldest ON oldest.subscription_id = s.id JOIN busy ON busy.subscription_id = s.id
       WHERE oldest.seq >= busy.from_seq + ${POSITION_STEP}
         FOR UPDATE OF s SKIP LOCKED
    ), listed AS (
      -- A subscription that leases gets a new list: what is still leased plus what this claim leases.
      INSERT INTO webhook_delivery_flight (subscription_id, in_flight)
      SELECT sub.id, ARRAY(SELECT flight.id FROM flight WHERE flight.subscription_id = sub.id
                           UNION ALL
                           SELECT picked.id FROM picked WHERE picked.subscription_id = sub.id)
        FROM sub
       WHERE EXISTS (SELECT 1 FROM picked WHERE picked.subscription_id = sub.id)
       ORDER BY sub.id
    ), unlisted AS (
      -- The list it replaces, by primary key: never read again, so never walked past.
      DELETE FROM webhook_delivery_flight f USING list
       WHERE f.subscription_id = list.subscription_id AND f.n = list.n
         AND EXISTS (SELECT 1 FROM picked WHERE picked.subscription_id = list.subscription_id)
    ), turns AS (
      -- A turn row is written only when it changes: moved to the back when the claim could not look at
      -- every turn due (rotate), parked or brought back, or its position moved. A row rewritten by every
      -- claim would be a chain of versions that a held horizon keeps, walked by every later read of it.
      UPDATE webhook_delivery_turn t
         SET turn_at = CASE WHEN looked.parked THEN now() + ${PARKED_FOR}
                            WHEN ${p.rotate}::boolean OR t.idle THEN now() ELSE t.turn_at END,
             idle = looked.parked,
             from_seq = coalesce((SELECT moved.seq FROM moved WHERE moved.id = t.subscription_id), t.from_seq)
        FROM (SELECT sub.id, EXISTS (SELECT 1 FROM emptied WHERE emptied.id = sub.id) AS parked FROM sub) looked
       WHERE t.subscription_id = looked.id
         AND (${p.rotate}::boolean OR looked.parked OR t.idle OR EXISTS (SELECT 1 FROM moved WHERE moved.id = t.subscription_id))
    ), leased AS (
      -- By primary key, from an array: the queue is often analysed empty (a drained queue keeps its
      -- pages), and a join with the picked rows was then planned with the queue as its outer side, read
      -- whole. An array of keys leaves one cheap way to find them, whatever the statistics say.
      UPDATE webhook_delivery d
         SET lease_expires_at = now() + ${p.leaseMs} * interval '1 millisecond', lease_token = ${p.leaseToken}
       WHERE d.id = ANY (ARRAY(SELECT picked.id FROM picked))
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now())
      RETURNING d.*
    )
    SELECT ${CLAIMED_COLUMNS} FROM leased d JOIN webhook_subscription s ON s.id = d.subscription_id`,
  { prepared: true },
);

/**
 * Step 3 of a claim: the turns step 2 parked or moved, checked again in a
 * new snapshot. Step 2 read the queue in the snapshot its statement began
 * with, and locked each subscription it parks or moves (`emptied`, `moved`)
 * later in that statement: a delivery queued by a publication that committed
 * in between is in neither, and that publication's trigger ran before the
 * turn changed. With those locks held (no delivery of them commits until
 * this claim does, and one that waits for it finds the turn as this claim
 * left it), this snapshot sees every delivery step 2 missed: a parked turn
 * with one waiting comes back, and a position past one moves back to it.
 * `fromSeqs` are the positions step 1 saw, where each walk starts; only the
 * turns that changed are walked.
 */
const RECHECK_TURNS = defineStatement<{ subscriptionIds: string[]; fromSeqs: string[] }>(
  (p) => sql`WITH changed AS MATERIALIZED (
      -- First, by primary key: the queues of the turns left as they were are never walked.
      SELECT r.id, r.from_seq
        FROM unnest(${p.subscriptionIds}::text[], ${p.fromSeqs}::bigint[]) AS r(id, from_seq)
        JOIN webhook_delivery_turn c ON c.subscription_id = r.id AND (c.idle OR c.from_seq > r.from_seq)
    )
    UPDATE webhook_delivery_turn t
       SET turn_at = CASE WHEN t.idle THEN now() ELSE t.turn_at END, idle = false,
           from_seq = least(t.from_seq, w.seq)
      FROM changed CROSS JOIN LATERAL (
            SELECT x.seq FROM webhook_delivery x
             WHERE x.subscription_id = changed.id AND x.status = 'pending' AND x.seq >= changed.from_seq
             ORDER BY x.seq LIMIT 1) w
     WHERE t.subscription_id = changed.id AND (t.idle OR t.from_seq > w.seq)`,
  { prepared: true },
);

/** Leases given back without an attempt: the deliveries are due again. */
const RELEASE_LEASES = defineStatement<{ ids: string[]; leaseTokens: string[] }>(
  (p) => sql`UPDATE webhook_delivery d SET lease_expires_at = NULL, lease_token = NULL
         FROM unnest(${p.ids}::text[], ${p.leaseTokens}::text[]) AS l(id, token)
        WHERE d.id = ANY (${p.ids}::text[]) AND d.id = l.id AND d.lease_token = l.token`,
  { prepared: false },
);

/**
 * Claims look at most this many times `maxDeliveries` subscriptions' turns
 * (a turn may find nothing to send: a failing subscription waiting for its
 * backoff, one at its cap); the worker's poll and wake-ups do the rest.
 */
const MAX_CLAIM_ROUNDS = 4;

/** The claim's statements, for the test that their cost does not grow with the backlog and the statements bench. */
export const CLAIM_STATEMENTS = {
  subscriptions: CLAIM_SUBSCRIPTIONS,
  deliveries: CLAIM_DELIVERIES,
  recheck: RECHECK_TURNS,
} as const;

/**
 * The worker's leases: taken by its claims, given back at its shutdown. The
 * one other lease, a resend's, is taken by DeliveryHistoryRepository and
 * listed where the claims count it (see CLAIM_DELIVERIES).
 */
@Injectable()
export class DeliveryClaimRepository {
  constructor(
    private readonly database: Database,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /**
   * Leases due deliveries to the caller. Three statements in one transaction:
   *
   * 1. take the subscriptions whose turn it is (least recently looked at
   *    first, from the small table of turns, never the backlog) and lock
   *    them, `FOR NO KEY UPDATE SKIP LOCKED` (workers never wait on each
   *    other, and outbox inserts, which only take KEY SHARE through the
   *    foreign key, never wait on a claim).
   * 2. with those locks held, and a fresh snapshot that sees every earlier
   *    claim, walk the head of each one's queue: count its attempts in
   *    flight and lease up to its cap, oldest first, dealt out in turns. A
   *    failing or replaying subscription sends only its oldest pending
   *    delivery, when it is due and nothing of it is in flight: one probe at
   *    a time, on the backoff schedule. When more turns were due than the
   *    claim had room for, the ones it looked at go to the back.
   * 3. check the turns step 2 parked or moved again, in a new snapshot
   *    (RECHECK_TURNS): a delivery that committed while step 2 ran is never
   *    left behind a position or under a parked turn.
   *
   * When every turn taken was used and room is left, it looks at the next
   * turns, a few rounds at most. A lease that expires (a crashed or stuck
   * worker) makes the delivery due again; the attempt is then made again (at
   * least once).
   */
  async claim(limits: ClaimLimits): Promise<ClaimedDelivery[]> {
    const claimed: ClaimedDelivery[] = [];
    for (let round = 0; round < MAX_CLAIM_ROUNDS && claimed.length < limits.maxDeliveries; round += 1) {
      const room = limits.maxDeliveries - claimed.length;
      const { looked, leased } = await this.unitOfWork.run(async (tx) => {
        const subscriptions = await CLAIM_SUBSCRIPTIONS.rows(
          { maxDeliveries: room, perSubscription: limits.perSubscription },
          tx,
        );
        if (subscriptions.length === 0) return { looked: 0, leased: [] };
        const subscriptionIds = subscriptions.map((s) => s.id);
        const rows = await CLAIM_DELIVERIES.rows(
          {
            subscriptionIds,
            perSubscription: limits.perSubscription,
            maxDeliveries: room,
            leaseMs: limits.leaseMs,
            leaseToken: limits.leaseToken,
            rotate: subscriptions.length >= room,
          },
          tx,
        );
        await RECHECK_TURNS.affected({ subscriptionIds, fromSeqs: subscriptions.map((s) => s.from_seq) }, tx);
        return { looked: subscriptions.length, leased: rows.map((row) => claimedDelivery(row, limits.leaseToken)) };
      });
      claimed.push(...leased);
      // Fewer turns than room: every subscription whose turn it is was looked at.
      if (looked < room) break;
    }
    return claimed;
  }

  /** Gives leases back without an attempt (shutdown cut an attempt short): the deliveries are due again. */
  async releaseLeases(leases: Array<{ id: string; leaseToken: string }>): Promise<void> {
    if (leases.length === 0) return;
    await RELEASE_LEASES.affected(
      { ids: leases.map((l) => l.id), leaseTokens: leases.map((l) => l.leaseToken) },
      this.database,
    );
  }
}
