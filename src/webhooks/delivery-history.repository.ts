import { Injectable } from '@nestjs/common';
import { sql, sqlText, type SqlFragment, type SqlParameter } from '../database/sql/sql-fragment';
import { defineStatement } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import { UnitOfWork } from '../database/unit-of-work';
import { CLAIMED_COLUMNS, claimedDelivery, type ClaimedDelivery, type ClaimedRow } from './delivery/claimed-delivery';
import { newestList } from './delivery/delivery-fragments';
import { DELIVERY_CHANNEL } from './delivery/delivery-queue.repository';
import type { DeliveryStatus } from './entities/webhook-delivery.entity';
import type { AttemptTrigger, WebhookEventType } from './webhook-event-types';

export interface DeliveryRow {
  id: string;
  eventType: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  traceId: string | null;
  attemptLog: Array<{
    at: Date;
    outcome: string;
    durationMs: number;
    trigger: AttemptTrigger;
    httpStatus: number | null;
    responseExcerpt: string | null;
  }>;
}

/** The columns the delivery log shows, from the queue (`pending`) or the history. */
const LOG_COLUMNS = sqlText(`id, event_type, status, attempts, last_status, created_at, trace_id, seq`);

/**
 * A subscription's deliveries, newest first, from the queue and the history
 * together (one snapshot: a delivery moving between them is seen once);
 * `onlyDeliveryId` (or null) narrows it to one.
 *
 * A failing or replaying subscription sends only its oldest pending delivery
 * (the probe; see CLAIM_DELIVERIES in delivery-claim.repository.ts): the
 * others wait behind it, so none of them is shown due before the probe is.
 * Their own time, often long past, would read as a worker that is stuck. A
 * disabled subscription sends nothing until it is enabled: no next attempt.
 */
const DELIVERIES_OF = defineStatement<
  { subscriptionId: string; limit: number; onlyDeliveryId: string | null; olderThanId: string | null },
  {
    id: string;
    event_type: WebhookEventType;
    status: DeliveryStatus;
    attempts: number;
    last_status: string | null;
    next_attempt_at: Date | null;
    created_at: Date;
    trace_id: string | null;
  }
>(
  // `olderThanId` pages the log: only deliveries before that one of the same subscription (none when it is not one).
  (p) => sql`WITH anchor AS (
                SELECT coalesce(
                  (SELECT seq FROM webhook_delivery WHERE id = ${p.olderThanId} AND subscription_id = ${p.subscriptionId}),
                  (SELECT seq FROM webhook_delivery_history
                    WHERE id = ${p.olderThanId} AND subscription_id = ${p.subscriptionId})) AS before_seq
              ), probe AS (
                SELECT o.id AS probe_id, o.next_attempt_at AS probe_due
                  FROM webhook_subscription s
                  JOIN webhook_delivery_turn t ON t.subscription_id = s.id
                 CROSS JOIN LATERAL (
                       SELECT x.id, x.next_attempt_at FROM webhook_delivery x
                        WHERE x.subscription_id = s.id AND x.status = 'pending' AND x.seq >= t.from_seq
                        ORDER BY x.seq LIMIT 1) o
                 WHERE s.id = ${p.subscriptionId}
                   AND (s.consecutive_failures > 0 OR EXISTS (
                         SELECT 1 FROM webhook_delivery r
                          WHERE r.subscription_id = s.id AND r.status = 'pending' AND r.replay)))
         SELECT id, event_type, status, attempts, last_status, next_attempt_at, created_at, trace_id
         FROM ((SELECT ${LOG_COLUMNS},
                       CASE WHEN NOT (SELECT s.enabled FROM webhook_subscription s WHERE s.id = ${p.subscriptionId})
                              THEN NULL
                            WHEN probe_id IS NULL OR id = probe_id THEN next_attempt_at
                            ELSE greatest(next_attempt_at, probe_due) END AS next_attempt_at
                  FROM webhook_delivery LEFT JOIN probe ON true
                 WHERE subscription_id = ${p.subscriptionId}
                   AND (${p.onlyDeliveryId}::text IS NULL OR id = ${p.onlyDeliveryId})
                   AND (${p.olderThanId}::text IS NULL OR seq < (SELECT before_seq FROM anchor))
                 ORDER BY seq DESC LIMIT ${p.limit})
               UNION ALL
               (SELECT ${LOG_COLUMNS}, NULL::timestamptz FROM webhook_delivery_history
                 WHERE subscription_id = ${p.subscriptionId}
                   AND (${p.onlyDeliveryId}::text IS NULL OR id = ${p.onlyDeliveryId})
                   AND (${p.olderThanId}::text IS NULL OR seq < (SELECT before_seq FROM anchor))
                 ORDER BY seq DESC LIMIT ${p.limit})) AS log
        ORDER BY seq DESC LIMIT ${p.limit}`,
  { prepared: false },
);

/** The attempt logs of some deliveries, oldest first. */
const ATTEMPTS_OF = defineStatement<
  { deliveryIds: string[] },
  {
    delivery_id: string;
    attempted_at: Date;
    outcome: string;
    duration_ms: number;
    triggered_by: AttemptTrigger;
    http_status: number | null;
    response_excerpt: string | null;
  }
>(
  (p) => sql`SELECT delivery_id, attempted_at, outcome, duration_ms, triggered_by, http_status, response_excerpt
         FROM webhook_delivery_attempt
        WHERE delivery_id = ANY (${p.deliveryIds}::text[]) ORDER BY id`,
  { prepared: false },
);

/** The queue's columns a delivery taken out of the history is written with; `h` is the history row. */
const QUEUED_AGAIN_COLUMNS = sqlText(`id, seq, subscription_id, event_type, subject_id, payload, attempts,
             last_status, created_at, trace_id, retry_from, next_attempt_at, replay, lease_expires_at, lease_token`);

/**
 * A final delivery moved from the history back into the queue under a lease
 * no claim takes (it is live), for a resend (see leaseForResend).
 */
const LEASE_FOR_RESEND = defineStatement<
  { subscriptionId: string; deliveryId: string; leaseMs: number; leaseToken: string },
  ClaimedRow
>(
  (p) => sql`WITH gone AS (
      DELETE FROM webhook_delivery_history h
       WHERE h.id = ${p.deliveryId} AND h.subscription_id = ${p.subscriptionId}
      RETURNING h.*
    ), queued AS (
      INSERT INTO webhook_delivery (${QUEUED_AGAIN_COLUMNS})
      SELECT h.id, h.seq, h.subscription_id, h.event_type, h.subject_id, h.payload, h.attempts, h.last_status,
             h.created_at, h.trace_id, h.attempts, now(), false,
             now() + ${p.leaseMs} * interval '1 millisecond', ${p.leaseToken}
        FROM gone h
      RETURNING *
    ), latest AS (
      ${newestList(p.subscriptionId)}
    ), listed AS (
      -- In flight like a claimed one: on its subscription's newest list, so claims count it (see
      -- CLAIM_DELIVERIES in delivery-claim.repository.ts), which replaces the list it extends.
      INSERT INTO webhook_delivery_flight (subscription_id, in_flight)
      SELECT queued.subscription_id, coalesce((SELECT latest.in_flight FROM latest), '{}') || queued.id FROM queued
    ), unlisted AS (
      DELETE FROM webhook_delivery_flight f USING latest
       WHERE f.subscription_id = ${p.subscriptionId} AND f.n = latest.n AND EXISTS (SELECT 1 FROM queued)
    )
    SELECT ${CLAIMED_COLUMNS} FROM queued d JOIN webhook_subscription s ON s.id = d.subscription_id`,
  { prepared: false },
);

/**
 * A resend's first step: its subscription's turn, locked as a claim locks it,
 * so that the list of leases it extends (LEASE_FOR_RESEND, in a statement of
 * its own and so a snapshot taken after the lock) is the newest, with every
 * claim's leases in it. No turn yet: no claim can run for the subscription
 * before this transaction commits (its queueing makes the turn).
 */
const LOCK_TURN_FOR_RESEND = defineStatement<{ subscriptionId: string }, { locked: number }>(
  (p) => sql`SELECT 1 AS locked FROM webhook_delivery_turn t WHERE t.subscription_id = ${p.subscriptionId}
         FOR NO KEY UPDATE`,
  { prepared: false },
);

/**
 * A resend's or a recovery's lock on its subscription, taken first, for the rest of its transaction: FOR KEY
 * SHARE conflicts with the FOR UPDATE of a deletion (SOFT_DELETE) and of a re-enable, so a deletion that
 * committed first is seen here (no row: refused), and one that comes later waits for this transaction and
 * then finds its work: a resend's lease in flight (DROP_PENDING leaves it to finish), a recovery's deliveries
 * queued (DROP_PENDING drops them with the rest). It never waits for a claim or an attempt's record (their
 * locks do not conflict with it), nor for a publication (KEY SHARE too).
 */
const LOCK_LIVE_SUBSCRIPTION = defineStatement<{ subscriptionId: string }, { enabled: boolean }>(
  (p) => sql`SELECT s.enabled FROM webhook_subscription s WHERE s.id = ${p.subscriptionId} AND s.deleted_at IS NULL
         FOR KEY SHARE`,
  { prepared: false },
);

/**
 * What a resend must leave room for, counted as a claim counts it (CLAIM_DELIVERIES): the valid leases of the
 * subscription's newest list, and whether it sends one at a time (failing, or replaying a recovery). Read after
 * the turn's lock, so the list is the newest and no claim adds to it before this transaction ends.
 */
const IN_FLIGHT_FOR_RESEND = defineStatement<{ subscriptionId: string }, { in_flight: number; serial: boolean }>(
  (p) => sql`SELECT (SELECT count(*) FROM (${newestList(p.subscriptionId)}) l
                    JOIN webhook_delivery x ON x.id = ANY (l.in_flight) AND x.lease_expires_at > now())::int AS in_flight,
                s.consecutive_failures > 0 OR EXISTS (
                  SELECT 1 FROM webhook_delivery r
                   WHERE r.subscription_id = s.id AND r.status = 'pending' AND r.replay) AS serial
           FROM webhook_subscription s WHERE s.id = ${p.subscriptionId}`,
  { prepared: false },
);

const STATUS_OF = defineStatement<{ subscriptionId: string; deliveryId: string }, { status: DeliveryStatus }>(
  (p) => sql`SELECT status FROM webhook_delivery WHERE id = ${p.deliveryId} AND subscription_id = ${p.subscriptionId}
        UNION ALL
        SELECT status FROM webhook_delivery_history WHERE id = ${p.deliveryId} AND subscription_id = ${p.subscriptionId}
        LIMIT 1`,
  { prepared: false },
);

interface WindowParams {
  subscriptionId: string;
  since: Date;
  /** Null: no upper bound. */
  until: Date | null;
  /** Also every skipped delivery numbered above this (a re-enable's, see requeueWindow); null: none. */
  skippedAfterSeq: string | null;
}

/**
 * History rows that did not succeed (failed, dropped, skipped), created in [since, until), and the skipped
 * ones numbered above `skippedAfterSeq`; `x` is the row.
 */
function inWindow(p: {
  subscriptionId: SqlParameter;
  since: SqlParameter;
  until: SqlParameter;
  skippedAfterSeq: SqlParameter;
}): SqlFragment {
  return sql`x.subscription_id = ${p.subscriptionId} AND x.status IN ('failed', 'dropped', 'skipped')
            AND ((x.created_at >= ${p.since} AND (${p.until}::timestamptz IS NULL OR x.created_at < ${p.until}))
                 OR (x.status = 'skipped' AND x.seq > ${p.skippedAfterSeq}::bigint))`;
}

/** Moves back into the queue, oldest first, up to `limit` of a window's deliveries (see requeueWindow). */
const REQUEUE_WINDOW = defineStatement<WindowParams & { limit: number }, { queued: number }>(
  (p) => sql`WITH picked AS (
      SELECT x.id FROM webhook_delivery_history x
       WHERE ${inWindow(p)}
       ORDER BY x.seq
       LIMIT ${p.limit}
       FOR UPDATE SKIP LOCKED
    ), gone AS (
      DELETE FROM webhook_delivery_history h USING picked
       WHERE h.id = picked.id AND h.subscription_id = ${p.subscriptionId}
      RETURNING h.*
    ), queued AS (
      INSERT INTO webhook_delivery (${QUEUED_AGAIN_COLUMNS})
      SELECT h.id, h.seq, h.subscription_id, h.event_type, h.subject_id, h.payload, h.attempts, h.last_status,
             h.created_at, h.trace_id, h.attempts, now(), true, NULL, NULL
        FROM gone h
      RETURNING 1
    )
    SELECT count(*)::int AS queued FROM queued`,
  { prepared: false },
);

/**
 * Recoveries of one subscription run one at a time, until their transaction
 * ends: one that ran beside another would count, as still to queue, the
 * deliveries the other is moving (it skips their locked rows, then counts
 * them), and answer "0 queued, 5 remaining" for nothing left to do.
 */
const LOCK_RECOVERY = defineStatement<{ subscriptionId: string }>(
  (p) => sql`SELECT pg_advisory_xact_lock(hashtext('webhook recovery'), hashtext(${p.subscriptionId}))`,
  { prepared: false },
);

/** How many of a window's deliveries are left to queue. */
const COUNT_WINDOW = defineStatement<WindowParams, { n: number }>(
  (p) => sql`SELECT count(*)::int AS n FROM webhook_delivery_history x WHERE ${inWindow(p)}`,
  { prepared: false },
);

/** Wakes every instance's worker (sent at commit). */
const WAKE_WORKERS = defineStatement<{ channel: string }>((p) => sql`SELECT pg_notify(${p.channel}, '')`, {
  prepared: false,
});

/**
 * The deliveries as the operations see them: the delivery log (queue and
 * history), the lease a resend takes and the recovery of a window, which
 * move final deliveries from the history back into the queue. The worker's
 * side of the queue is DeliveryClaimRepository and AttemptRecordRepository,
 * the outbox's is DeliveryQueueRepository; retention is
 * DeliveryPartitionsRepository's.
 */
@Injectable()
export class DeliveryHistoryRepository {
  constructor(
    private readonly database: Database,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /**
   * Newest first, each with its attempt log oldest first; with `olderThanId`
   * (a delivery of this subscription), the next page: those before it.
   */
  async listForSubscription(
    subscriptionId: string,
    limit: number,
    options: { onlyDeliveryId?: string; olderThanId?: string } = {},
  ): Promise<DeliveryRow[]> {
    const rows = await DELIVERIES_OF.rows(
      {
        subscriptionId,
        limit,
        onlyDeliveryId: options.onlyDeliveryId ?? null,
        olderThanId: options.olderThanId ?? null,
      },
      this.database,
    );
    if (rows.length === 0) return [];
    const attempts = await ATTEMPTS_OF.rows({ deliveryIds: rows.map((row) => row.id) }, this.database);
    const logs = new Map<string, DeliveryRow['attemptLog']>();
    for (const attempt of attempts) {
      const log = logs.get(attempt.delivery_id) ?? [];
      log.push({
        at: attempt.attempted_at,
        outcome: attempt.outcome,
        durationMs: attempt.duration_ms,
        trigger: attempt.triggered_by,
        httpStatus: attempt.http_status,
        responseExcerpt: attempt.response_excerpt,
      });
      logs.set(attempt.delivery_id, log);
    }
    return rows.map((row) => ({
      id: row.id,
      eventType: row.event_type,
      status: row.status,
      attempts: row.attempts,
      lastStatus: row.last_status,
      nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
      createdAt: row.created_at,
      traceId: row.trace_id,
      attemptLog: logs.get(row.id) ?? [],
    }));
  }

  /** Whether a delivery (queued or final) is this subscription's. */
  async belongsTo(subscriptionId: string, deliveryId: string): Promise<boolean> {
    return (await STATUS_OF.one({ subscriptionId, deliveryId }, this.database)) !== null;
  }

  /**
   * Leases one delivery in a final state for a manual attempt (resend): it
   * becomes pending under a lease no worker claim can take, and the caller
   * makes the attempt at once. Should this process die first, the lease
   * expires and the worker sends it on a fresh schedule (at least once).
   *
   * In one transaction, with the subscription locked against its deletion
   * and re-enabling (LOCK_LIVE_SUBSCRIPTION) and its turn against
   * claims, so what is checked still holds when the lease commits:
   * `'deleted'` when the subscription is gone, `'disabled'` when it is off
   * and `force` is not set, `'busy'` when it already has `maxInFlight`
   * attempts in flight, or one while it sends one at a time (failing or
   * replaying): a resend is held to the claims' caps, as one more attempt.
   * Null when the delivery is not this subscription's, `'pending'` when it
   * is still pending.
   */
  async leaseForResend(
    subscriptionId: string,
    deliveryId: string,
    lease: { leaseMs: number; leaseToken: string; force: boolean; maxInFlight: number },
  ): Promise<ClaimedDelivery | 'pending' | 'deleted' | 'disabled' | 'busy' | null> {
    const claimed = await this.unitOfWork.run(async (tx) => {
      const subscription = await LOCK_LIVE_SUBSCRIPTION.one({ subscriptionId }, tx);
      if (subscription === null) return 'deleted' as const;
      if (!subscription.enabled && !lease.force) return 'disabled' as const;
      await LOCK_TURN_FOR_RESEND.rows({ subscriptionId }, tx);
      const flight = await IN_FLIGHT_FOR_RESEND.one({ subscriptionId }, tx);
      const inFlight = flight?.in_flight ?? 0;
      if (inFlight >= (flight?.serial === true ? 1 : lease.maxInFlight)) return 'busy' as const;
      return LEASE_FOR_RESEND.one(
        { subscriptionId, deliveryId, leaseMs: lease.leaseMs, leaseToken: lease.leaseToken },
        tx,
      );
    });
    if (typeof claimed === 'string') return claimed;
    if (claimed !== null) return claimedDelivery(claimed, lease.leaseToken);
    const existing = await STATUS_OF.one({ subscriptionId, deliveryId }, this.database);
    return existing !== null ? 'pending' : null;
  }

  /**
   * Queues again, oldest first, the deliveries of a subscription created in
   * [since, until) that neither succeeded nor are pending, at most `limit`;
   * each gets a fresh retry schedule and is sent in order (replay). With
   * `skippedAfterSeq` (a re-enable's), also every skipped delivery numbered
   * above it, whenever it was created: what was skipped while the
   * subscription was off, including one whose publication began before it
   * was disabled. Returns how many were queued and how many more match;
   * `'deleted'` (nothing queued) when the subscription is gone, and
   * `'disabled'` when it is off and `refuseDisabled` is set, checked with the
   * subscription locked against its deletion (LOCK_LIVE_SUBSCRIPTION): a
   * deletion committed first is seen, and one that comes later drops what
   * this queued.
   */
  async requeueWindow(
    subscriptionId: string,
    window: { since: Date; until: Date | null; skippedAfterSeq?: string | null },
    limit: number,
    options: { refuseDisabled: boolean },
  ): Promise<{ queued: number; remaining: number } | 'deleted' | 'disabled'> {
    return this.unitOfWork.run(async (tx) => {
      await LOCK_RECOVERY.rows({ subscriptionId }, tx);
      const subscription = await LOCK_LIVE_SUBSCRIPTION.one({ subscriptionId }, tx);
      if (subscription === null) return 'deleted' as const;
      if (!subscription.enabled && options.refuseDisabled) return 'disabled' as const;
      const bounds = {
        subscriptionId,
        since: window.since,
        until: window.until,
        skippedAfterSeq: window.skippedAfterSeq ?? null,
      };
      const queued = (await REQUEUE_WINDOW.one({ ...bounds, limit }, tx))?.queued ?? 0;
      const rest = await COUNT_WINDOW.one(bounds, tx);
      if (queued > 0) await WAKE_WORKERS.rows({ channel: DELIVERY_CHANNEL }, tx);
      return { queued, remaining: rest?.n ?? 0 };
    });
  }
}
