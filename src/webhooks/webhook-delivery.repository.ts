import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import type { DeliveryStatus } from './entities/webhook-delivery.entity';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { returningRows } from './returning-rows';
import { FAILURES_BEFORE_DISABLE, type AttemptOutcome, type WebhookEventType } from './webhook-event-types';

/** PostgreSQL channel on which every instance's worker is woken when deliveries are written. */
export const DELIVERY_CHANNEL = 'webhook_delivery';

export interface NewDelivery {
  id: string;
  subscriptionId: string;
  eventType: WebhookEventType;
  subjectId: string;
  payload: Buffer;
}

/** A delivery leased to this worker for one attempt. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  eventType: WebhookEventType;
  payload: Buffer;
  /** Attempts already made before this one. */
  attempts: number;
  url: string;
  secretSealed: string;
  leaseToken: string;
}

export interface ClaimLimits {
  /** At most this many deliveries in all (the worker's free capacity). */
  maxDeliveries: number;
  /** At most this many attempts in flight per subscription at once. */
  perSubscription: number;
  leaseMs: number;
  leaseToken: string;
}

export interface AttemptRecord {
  delivery: ClaimedDelivery;
  attemptedAt: Date;
  outcome: AttemptOutcome;
  durationMs: number;
  succeeded: boolean;
  /** What becomes of the delivery. */
  next: { status: DeliveryStatus; retryInMs: number | null };
}

export interface AttemptRecorded {
  /** False when the lease had expired and another worker owns the delivery now. */
  deliveryUpdated: boolean;
  /** This attempt was the twentieth consecutive failure. */
  disabledNow: boolean;
}

export interface DeliveryRow {
  id: string;
  eventType: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  attemptLog: Array<{ at: Date; outcome: string; durationMs: number }>;
}

/** Pending, due, and not leased (or its lease expired). */
function due(alias: string): string {
  return `${alias}.status = 'pending' AND ${alias}.next_attempt_at <= now()
          AND (${alias}.lease_expires_at IS NULL OR ${alias}.lease_expires_at <= now())`;
}

/**
 * The outbox and its claims. Everything the delivery worker decides is
 * written here, in PostgreSQL, so that a crash at any moment leaves either a
 * pending delivery (sent again) or a recorded outcome, never a lost one.
 */
@Injectable()
export class WebhookDeliveryRepository {
  constructor(
    @InjectRepository(WebhookDeliveryEntity) private readonly deliveries: Repository<WebhookDeliveryEntity>,
  ) {}

  /**
   * Inserts pending deliveries in the publishing transaction, due at once,
   * and tells every instance's worker (NOTIFY is sent at commit, and only
   * then). A fact already delivered to a subscription is not inserted twice.
   */
  async enqueue(rows: NewDelivery[], manager: EntityManager): Promise<number> {
    if (rows.length === 0) return 0;
    const inserted: unknown[] = await manager.query(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
       SELECT r.id, r.subscription_id, r.event_type, r.subject_id, r.payload, now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[])
              AS r(id, subscription_id, event_type, subject_id, payload)
       ON CONFLICT (subscription_id, event_type, subject_id) DO NOTHING
       RETURNING id`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.subscriptionId),
        rows.map((r) => r.eventType),
        rows.map((r) => r.subjectId),
        rows.map((r) => r.payload),
      ],
    );
    if (inserted.length > 0) await manager.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
    return inserted.length;
  }

  /** A deleted subscription's queue is dropped; an attempt in flight (leased) finishes and is recorded. */
  async dropPending(subscriptionId: string, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhook_delivery SET status = 'dropped', next_attempt_at = NULL, completed_at = now()
        WHERE subscription_id = $1 AND status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= now())`,
      [subscriptionId],
    );
  }

  /**
   * Leases due deliveries to the caller. Two statements in one transaction:
   *
   * 1. lock the subscriptions that have something sendable, `FOR NO KEY
   *    UPDATE SKIP LOCKED` (workers never wait on each other, and outbox
   *    inserts, which only take KEY SHARE through the foreign key, never
   *    wait on a claim). A failing subscription (consecutive failures > 0)
   *    is sendable only when its oldest pending delivery is due and nothing
   *    of it is in flight: one probe at a time, on the backoff schedule.
   * 2. with those locks held, and a fresh snapshot that sees every earlier
   *    claim, count each subscription's attempts in flight and lease up to
   *    the cap, oldest first, `FOR UPDATE SKIP LOCKED`.
   *
   * A lease that expires (a crashed or stuck worker) makes the delivery due
   * again; the attempt is then made again (at least once).
   */
  async claim(limits: ClaimLimits): Promise<ClaimedDelivery[]> {
    return this.deliveries.manager.transaction(async (manager) => {
      const subscriptions: Array<{ id: string; consecutive_failures: number }> = await manager.query(
        `WITH due AS (
           SELECT d.subscription_id, min(d.next_attempt_at) AS first_due
             FROM webhook_delivery d WHERE ${due('d')}
            GROUP BY d.subscription_id
         )
         SELECT s.id, s.consecutive_failures
           FROM due JOIN webhook_subscription s ON s.id = due.subscription_id
          WHERE s.enabled AND s.deleted_at IS NULL
            AND (SELECT count(*) FROM webhook_delivery b
                  WHERE b.subscription_id = s.id AND b.status = 'pending' AND b.lease_expires_at > now())
                < CASE WHEN s.consecutive_failures = 0 THEN $2 ELSE 1 END
            AND (s.consecutive_failures = 0 OR EXISTS (
                  SELECT 1 FROM (SELECT o.next_attempt_at, o.lease_expires_at FROM webhook_delivery o
                                  WHERE o.subscription_id = s.id AND o.status = 'pending'
                                  ORDER BY o.seq LIMIT 1) oldest
                   WHERE oldest.next_attempt_at <= now()
                     AND (oldest.lease_expires_at IS NULL OR oldest.lease_expires_at <= now())))
          ORDER BY due.first_due
          LIMIT $1
          FOR NO KEY UPDATE OF s SKIP LOCKED`,
        [limits.maxDeliveries, limits.perSubscription],
      );
      if (subscriptions.length === 0) return [];
      const rows: Array<{
        id: string;
        subscription_id: string;
        event_type: WebhookEventType;
        payload: Buffer;
        attempts: number;
        url: string;
        secret_sealed: string;
      }> = await returningRows(
        manager,
        `WITH picked AS (
           SELECT c.id
             FROM unnest($1::text[], $2::int[]) AS sub(id, failures)
            CROSS JOIN LATERAL (
                  SELECT count(*)::int AS n FROM webhook_delivery b
                   WHERE b.subscription_id = sub.id AND b.status = 'pending' AND b.lease_expires_at > now()
                 ) busy
            CROSS JOIN LATERAL (
                  SELECT x.id, x.next_attempt_at FROM webhook_delivery x
                   WHERE x.subscription_id = sub.id AND ${due('x')}
                     AND (sub.failures = 0 OR NOT EXISTS (
                           SELECT 1 FROM webhook_delivery o
                            WHERE o.subscription_id = sub.id AND o.status = 'pending' AND o.seq < x.seq))
                   ORDER BY x.seq
                   LIMIT GREATEST(0, CASE WHEN sub.failures = 0 THEN $3 ELSE 1 END - busy.n)
                   FOR UPDATE SKIP LOCKED
                 ) c
            ORDER BY c.next_attempt_at
            LIMIT $4
         )
         UPDATE webhook_delivery d
            SET lease_expires_at = now() + $5 * interval '1 millisecond', lease_token = $6
           FROM picked, webhook_subscription s
          WHERE d.id = picked.id AND s.id = d.subscription_id
         RETURNING d.id, d.subscription_id, d.event_type, d.payload, d.attempts, s.url, s.secret_sealed`,
        [
          subscriptions.map((s) => s.id),
          subscriptions.map((s) => s.consecutive_failures),
          limits.perSubscription,
          limits.maxDeliveries,
          limits.leaseMs,
          limits.leaseToken,
        ],
      );
      return rows.map((row) => ({
        id: row.id,
        subscriptionId: row.subscription_id,
        eventType: row.event_type,
        payload: row.payload,
        attempts: row.attempts,
        url: row.url,
        secretSealed: row.secret_sealed,
        leaseToken: limits.leaseToken,
      }));
    });
  }

  /**
   * Writes one attempt and its consequences atomically, in one statement
   * (one round trip per attempt): the attempt log row, the subscription's
   * lastStatus and failure count (twenty in a row disable it), and the
   * delivery's next state. The delivery is only updated while this worker
   * still holds its lease; a retry planned for a since-deleted subscription
   * becomes `dropped`.
   */
  async recordAttempt(record: AttemptRecord): Promise<AttemptRecorded> {
    const { delivery } = record;
    const rows: Array<{ disabled_now: boolean; delivery_updated: boolean }> = await this.deliveries.query(
      `WITH attempt AS (
         INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms)
         VALUES ($1, $3, $4, $5)
       ), subscription AS (
         UPDATE webhook_subscription s
            SET last_status = $4,
                consecutive_failures = CASE WHEN $6::boolean THEN 0 ELSE s.consecutive_failures + 1 END,
                enabled = CASE WHEN NOT $6::boolean AND s.consecutive_failures + 1 >= $7 THEN false ELSE s.enabled END,
                updated_at = now()
          WHERE s.id = $8
         RETURNING s.deleted_at IS NOT NULL AS deleted,
                   (NOT $6::boolean AND s.consecutive_failures = $7 AND NOT s.enabled) AS disabled_now
       ), next AS (
         SELECT CASE WHEN $9::text = 'pending' AND coalesce((SELECT deleted FROM subscription), true)
                     THEN 'dropped' ELSE $9::text END AS status
       ), delivery AS (
         UPDATE webhook_delivery d
            SET attempts = d.attempts + 1,
                last_status = $4,
                status = next.status,
                next_attempt_at = CASE WHEN next.status = 'pending'
                                       THEN now() + $10::double precision * interval '1 millisecond' END,
                completed_at = CASE WHEN next.status = 'pending' THEN NULL ELSE now() END,
                lease_expires_at = NULL,
                lease_token = NULL
           FROM next
          WHERE d.id = $1 AND d.lease_token = $2
         RETURNING d.id
       )
       SELECT coalesce((SELECT disabled_now FROM subscription), false) AS disabled_now,
              EXISTS (SELECT 1 FROM delivery) AS delivery_updated`,
      [
        delivery.id,
        delivery.leaseToken,
        record.attemptedAt,
        String(record.outcome),
        record.durationMs,
        record.succeeded,
        FAILURES_BEFORE_DISABLE,
        delivery.subscriptionId,
        record.next.status,
        record.next.retryInMs ?? 0,
      ],
    );
    return { deliveryUpdated: rows[0]?.delivery_updated ?? false, disabledNow: rows[0]?.disabled_now ?? false };
  }

  /** Gives leases back without an attempt (shutdown cut an attempt short): the deliveries are due again. */
  async releaseLeases(leases: Array<{ id: string; leaseToken: string }>): Promise<void> {
    if (leases.length === 0) return;
    await this.deliveries.query(
      `UPDATE webhook_delivery d SET lease_expires_at = NULL, lease_token = NULL
         FROM unnest($1::text[], $2::text[]) AS l(id, token)
        WHERE d.id = l.id AND d.lease_token = l.token`,
      [leases.map((l) => l.id), leases.map((l) => l.leaseToken)],
    );
  }

  /** Newest first, each with its attempt log oldest first. */
  async listForSubscription(subscriptionId: string, limit: number): Promise<DeliveryRow[]> {
    const rows: Array<{
      id: string;
      event_type: WebhookEventType;
      status: DeliveryStatus;
      attempts: number;
      last_status: string | null;
      next_attempt_at: Date | null;
      created_at: Date;
    }> = await this.deliveries.query(
      `SELECT id, event_type, status, attempts, last_status, next_attempt_at, created_at
         FROM webhook_delivery WHERE subscription_id = $1
        ORDER BY seq DESC LIMIT $2`,
      [subscriptionId, limit],
    );
    if (rows.length === 0) return [];
    const attempts: Array<{ delivery_id: string; attempted_at: Date; outcome: string; duration_ms: number }> =
      await this.deliveries.query(
        `SELECT delivery_id, attempted_at, outcome, duration_ms FROM webhook_delivery_attempt
          WHERE delivery_id = ANY ($1::text[]) ORDER BY id`,
        [rows.map((row) => row.id)],
      );
    const logs = new Map<string, DeliveryRow['attemptLog']>();
    for (const attempt of attempts) {
      const log = logs.get(attempt.delivery_id) ?? [];
      log.push({ at: attempt.attempted_at, outcome: attempt.outcome, durationMs: attempt.duration_ms });
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
      attemptLog: logs.get(row.id) ?? [],
    }));
  }
}
