import { Injectable } from '@nestjs/common';
import { sql, sqlText } from '../database/sql/sql-fragment';
import { defineStatement } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import { UnitOfWork } from '../database/unit-of-work';
import { CLAIMED_COLUMNS, claimedDelivery, type ClaimedDelivery, type ClaimedRow } from './delivery/claimed-delivery';
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

/** A subscription's deliveries, newest first; `onlyDeliveryId` (or null) narrows it to one. */
const DELIVERIES_OF = defineStatement<
  { subscriptionId: string; limit: number; onlyDeliveryId: string | null },
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
  (p) => sql`SELECT id, event_type, status, attempts, last_status, next_attempt_at, created_at, trace_id
         FROM webhook_delivery
        WHERE subscription_id = ${p.subscriptionId} AND (${p.onlyDeliveryId}::text IS NULL OR id = ${p.onlyDeliveryId})
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

/** A final delivery made pending under a lease no claim takes, for a resend (see leaseForResend). */
const LEASE_FOR_RESEND = defineStatement<
  { subscriptionId: string; deliveryId: string; leaseMs: number; leaseToken: string },
  ClaimedRow
>(
  (p) => sql`UPDATE webhook_delivery d
          SET status = 'pending', next_attempt_at = now(), completed_at = NULL, retry_from = d.attempts,
              replay = false, lease_expires_at = now() + ${p.leaseMs} * interval '1 millisecond',
              lease_token = ${p.leaseToken}
         FROM webhook_subscription s
        WHERE d.id = ${p.deliveryId} AND d.subscription_id = ${p.subscriptionId} AND s.id = d.subscription_id
          AND d.status <> 'pending'
       RETURNING ${CLAIMED_COLUMNS}`,
  { prepared: false },
);

const STATUS_OF = defineStatement<{ subscriptionId: string; deliveryId: string }, { status: DeliveryStatus }>(
  (p) => sql`SELECT status FROM webhook_delivery WHERE id = ${p.deliveryId} AND subscription_id = ${p.subscriptionId}`,
  { prepared: false },
);

interface WindowParams {
  subscriptionId: string;
  since: Date;
  /** Null: no upper bound. */
  until: Date | null;
}

/** Deliveries that neither succeeded nor are pending, created in [since, until); `x` is the delivery. */
const IN_WINDOW = sqlText(`x.status IN ('failed', 'dropped', 'skipped')`);

/** Queues again, oldest first, up to `limit` of a window's deliveries (see requeueWindow). */
const REQUEUE_WINDOW = defineStatement<WindowParams & { limit: number }>(
  (p) => sql`UPDATE webhook_delivery d
            SET status = 'pending', next_attempt_at = now(), completed_at = NULL, retry_from = d.attempts,
                replay = true, lease_expires_at = NULL, lease_token = NULL
          WHERE d.id IN (SELECT x.id FROM webhook_delivery x
                          WHERE x.subscription_id = ${p.subscriptionId} AND ${IN_WINDOW}
                            AND x.created_at >= ${p.since}
                            AND (${p.until}::timestamptz IS NULL OR x.created_at < ${p.until})
                          ORDER BY x.seq
                          LIMIT ${p.limit}
                          FOR UPDATE SKIP LOCKED)`,
  { prepared: false },
);

/** How many of a window's deliveries are left to queue. */
const COUNT_WINDOW = defineStatement<WindowParams, { n: number }>(
  (p) => sql`SELECT count(*)::int AS n FROM webhook_delivery x
          WHERE x.subscription_id = ${p.subscriptionId} AND ${IN_WINDOW}
            AND x.created_at >= ${p.since} AND (${p.until}::timestamptz IS NULL OR x.created_at < ${p.until})`,
  { prepared: false },
);

/** Wakes every instance's worker (sent at commit). */
const WAKE_WORKERS = defineStatement<{ channel: string }>((p) => sql`SELECT pg_notify(${p.channel}, '')`, {
  prepared: false,
});

/** One batch of final deliveries past retention, oldest first (see purgeFinished). */
const PURGE_FINISHED = defineStatement<{ retentionDays: number; batch: number }>(
  (p) => sql`DELETE FROM webhook_delivery
        WHERE id IN (SELECT id FROM webhook_delivery
                      WHERE status <> 'pending' AND completed_at < now() - ${p.retentionDays} * interval '1 day'
                      ORDER BY completed_at
                      LIMIT ${p.batch}
                      FOR UPDATE SKIP LOCKED)`,
  { prepared: false },
);

/**
 * The deliveries as the operations see them: the delivery log, the lease a
 * resend takes, the recovery of a window and the retention purge. The
 * worker's side of the same table is DeliveryQueueRepository.
 */
@Injectable()
export class DeliveryHistoryRepository {
  constructor(
    private readonly database: Database,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /** Newest first, each with its attempt log oldest first. */
  async listForSubscription(subscriptionId: string, limit: number, onlyDeliveryId?: string): Promise<DeliveryRow[]> {
    const rows = await DELIVERIES_OF.rows(
      { subscriptionId, limit, onlyDeliveryId: onlyDeliveryId ?? null },
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

  /**
   * Leases one delivery in a final state for a manual attempt (resend): it
   * becomes pending under a lease no worker claim can take, and the caller
   * makes the attempt at once. Should this process die first, the lease
   * expires and the worker sends it on a fresh schedule (at least once).
   * Null when the delivery is not this subscription's or is still pending.
   */
  async leaseForResend(
    subscriptionId: string,
    deliveryId: string,
    lease: { leaseMs: number; leaseToken: string },
  ): Promise<ClaimedDelivery | 'pending' | null> {
    const claimed = await LEASE_FOR_RESEND.one(
      { subscriptionId, deliveryId, leaseMs: lease.leaseMs, leaseToken: lease.leaseToken },
      this.database,
    );
    if (claimed !== null) return claimedDelivery(claimed, lease.leaseToken);
    const existing = await STATUS_OF.one({ subscriptionId, deliveryId }, this.database);
    return existing !== null ? 'pending' : null;
  }

  /**
   * Queues again, oldest first, the deliveries of a subscription created in
   * [since, until) that neither succeeded nor are pending, at most `limit`;
   * each gets a fresh retry schedule and is sent in order (replay). Returns
   * how many were queued and how many more match.
   */
  async requeueWindow(
    subscriptionId: string,
    window: { since: Date; until: Date | null },
    limit: number,
  ): Promise<{ queued: number; remaining: number }> {
    return this.unitOfWork.run(async (tx) => {
      const bounds = { subscriptionId, since: window.since, until: window.until };
      const queued = await REQUEUE_WINDOW.affected({ ...bounds, limit }, tx);
      const rest = await COUNT_WINDOW.one(bounds, tx);
      if (queued > 0) await WAKE_WORKERS.rows({ channel: DELIVERY_CHANNEL }, tx);
      return { queued, remaining: rest?.n ?? 0 };
    });
  }

  /**
   * One batch of the retention purge: final deliveries completed more than
   * `retentionDays` ago (their attempts go with them). SKIP LOCKED and a
   * small batch keep it out of the worker's way: it never waits on a row a
   * claim or an attempt holds, and each statement is short.
   */
  async purgeFinished(retentionDays: number, batch: number): Promise<number> {
    return PURGE_FINISHED.affected({ retentionDays, batch }, this.database);
  }
}
