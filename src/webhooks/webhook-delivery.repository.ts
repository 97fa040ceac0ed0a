import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import type { DeliveryStatus } from './entities/webhook-delivery.entity';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { OutboxSenderId } from './outbox/outbox-sender-id';
import { returningRows } from './returning-rows';
import { preparedStatement } from '../common/persistence/prepared-statement';
import { SqlStatements } from '../common/persistence/sql-statements';
import type { WebhookWarningKind } from './entities/webhook-warning.entity';
import { FAILURES_BEFORE_DISABLE, type AttemptOutcome, type WebhookEventType } from './webhook-event-types';

/** PostgreSQL channel on which every instance's worker is woken when deliveries are written. */
export const DELIVERY_CHANNEL = 'webhook_delivery';

export interface NewDelivery {
  id: string;
  subscriptionId: string;
  eventType: WebhookEventType;
  subjectId: string;
  payload: Buffer;
  traceId: string;
  /** `skipped` for a disabled subscription: recorded, never attempted, recoverable. */
  status: 'pending' | 'skipped';
}

/** A delivery leased to this worker for one attempt. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  eventType: WebhookEventType;
  payload: Buffer;
  /** Attempts already made before this one. */
  attempts: number;
  /** Attempts made before the current retry schedule began. */
  retryFrom: number;
  traceId: string | null;
  url: string;
  secretSealed: string;
  /** The secret a rotation replaced, while its grace period lasts. */
  previousSecretSealed: string | null;
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
  /** A resend: its failure does not count towards disabling, its success still clears the failures. */
  trigger: AttemptTrigger;
  /** What becomes of the delivery. */
  next: { status: DeliveryStatus; retryInMs: number | null };
}

export interface AttemptRecorded {
  /** False when the lease had expired and another worker owns the delivery now. */
  deliveryUpdated: boolean;
  /** This attempt was the twentieth consecutive failure. */
  disabledNow: boolean;
  /** Warnings this attempt raised (failing at 5, 10, 15; disabled; recovered). */
  warnings: Array<{ kind: WebhookWarningKind; consecutiveFailures: number }>;
}

export type AttemptTrigger = 'scheduled' | 'manual';

export interface DeliveryRow {
  id: string;
  eventType: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  traceId: string | null;
  attemptLog: Array<{ at: Date; outcome: string; durationMs: number; trigger: AttemptTrigger }>;
}

/** Consecutive failures at which a `failing` warning is recorded. */
export const FAILING_WARNING_AT = [5, 10, 15];

const DELIVERY_COLUMNS = 'id, event_type, status, attempts, last_status, next_attempt_at, created_at, trace_id';

/** What a claim (or a resend's lease) returns, with the subscription's url and active secrets. */
const CLAIMED_COLUMNS = `d.id, d.subscription_id, d.event_type, d.payload, d.attempts, d.retry_from, d.trace_id, s.url,
  s.secret_sealed,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_sealed END AS previous_secret_sealed`;

interface ClaimedRow {
  id: string;
  subscription_id: string;
  event_type: WebhookEventType;
  payload: Buffer;
  attempts: number;
  retry_from: number;
  trace_id: string | null;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

function claimedDelivery(row: ClaimedRow, leaseToken: string): ClaimedDelivery {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    eventType: row.event_type,
    payload: row.payload,
    attempts: row.attempts,
    retryFrom: row.retry_from,
    traceId: row.trace_id,
    url: row.url,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    leaseToken,
  };
}

/**
 * Warnings an attempt raises, from the subscription as the attempt left it:
 * `failing` at 5, 10 and 15 consecutive failures, `disabled` at the failure
 * that disabled it, `recovered` at the first success after either.
 */
function warningsRaised(
  succeeded: boolean,
  manual: boolean,
  row: { failures: number | null; enabled: boolean | null; was_alerting: boolean | null } | undefined,
): Array<{ kind: WebhookWarningKind; consecutiveFailures: number }> {
  if (row === undefined || row.failures === null) return [];
  if (succeeded) return row.was_alerting === true ? [{ kind: 'recovered', consecutiveFailures: 0 }] : [];
  if (manual) return [];
  const raised: Array<{ kind: WebhookWarningKind; consecutiveFailures: number }> = [];
  if (FAILING_WARNING_AT.includes(row.failures)) raised.push({ kind: 'failing', consecutiveFailures: row.failures });
  if (row.enabled === false && row.failures === FAILURES_BEFORE_DISABLE) {
    raised.push({ kind: 'disabled', consecutiveFailures: row.failures });
  }
  return raised;
}

/** Pending, due, and not leased (or its lease expired). */
function due(alias: string): string {
  return `${alias}.status = 'pending' AND ${alias}.next_attempt_at <= now()
          AND (${alias}.lease_expires_at IS NULL OR ${alias}.lease_expires_at <= now())`;
}

/** The attempts in flight for a subscription: its pending rows with a live lease (read from the leased rows' index). */
function leasesHeldBy(subscriptionId: string): string {
  return `(SELECT count(*)::int FROM webhook_delivery b
            WHERE b.subscription_id = ${subscriptionId} AND b.status = 'pending' AND b.lease_expires_at > now())`;
}

/**
 * Lets the statement's transaction commit without waiting for the WAL flush
 * (`synchronous_commit = off`, for that transaction only). Used for what the
 * worker writes about attempts: leases and attempt records. A database crash
 * can forget the last fraction of a second of them (never an event: the
 * outbox rows are committed by the publishing transaction, flushed as
 * always), and forgetting one only makes the delivery due again, which
 * at-least-once delivery covers. Waiting for the flush held each
 * subscription's row lock through it, so its attempts recorded one flush at
 * a time.
 */
const COMMIT_WITHOUT_FLUSH = `set_config('synchronous_commit', 'off', true)`;

/**
 * The outbox insert (see enqueue): a confirmation's deliveries, one row per
 * recipient, and the wake-up for every instance's worker in the same round
 * trip (`pg_notify` only when a pending row was inserted; PostgreSQL sends it
 * at commit). Prepared once: every confirmation runs it.
 */
export const ENQUEUE_DELIVERIES = preparedStatement(
  `WITH inserted AS (
      INSERT INTO webhook_delivery
             (id, subscription_id, event_type, subject_id, payload, trace_id, status, next_attempt_at, completed_at)
      SELECT r.id, r.subscription_id, r.event_type, r.subject_id, r.payload, r.trace_id, r.status,
             CASE WHEN r.status = 'pending' THEN now() END, CASE WHEN r.status = 'skipped' THEN now() END
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], $7::text[])
             AS r(id, subscription_id, event_type, subject_id, payload, trace_id, status)
      ON CONFLICT (subscription_id, event_type, subject_id) DO NOTHING
      RETURNING status
    ), counted AS (
      SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending FROM inserted
    )
    -- pg_notify returns void: selecting it is how a statement sends the notification.
    SELECT counted.pending, (SELECT pg_notify($8, $9) WHERE counted.pending > 0) AS wake_workers
      FROM counted`,
);

/**
 * How stale the subscription row's last success time may be. A busy
 * subscription succeeds hundreds of times a second, and writing its row for
 * each success (a new row version, under the row's lock, which every other
 * attempt of the subscription then queues for) was the largest cost of a
 * delivery. So a success that changes nothing else is written only when the
 * stored time is this old; the health read takes the latest success from the
 * attempt log as well, which every success is written to.
 */
const SUCCESS_TIME_GRANULARITY = `interval '1 second'`;

/** One attempt and its consequences (see recordAttempt): the statement of every delivery, so prepared once. */
export const RECORD_ATTEMPT = preparedStatement(
  `WITH before AS (
      SELECT alert_open FROM webhook_subscription WHERE id = $8
    ), attempt AS (
      INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms, triggered_by)
      VALUES ($1, $3, $4, $5, CASE WHEN $11::boolean THEN 'manual' ELSE 'scheduled' END)
    ), subscription AS (
      UPDATE webhook_subscription s
         SET last_status = $4,
             consecutive_failures = CASE WHEN $6::boolean THEN 0
                                         WHEN $11::boolean THEN s.consecutive_failures
                                         ELSE s.consecutive_failures + 1 END,
             enabled = CASE WHEN NOT $6::boolean AND NOT $11::boolean AND s.consecutive_failures + 1 >= $7
                            THEN false ELSE s.enabled END,
             disabled_at = CASE WHEN NOT $6::boolean AND NOT $11::boolean AND s.enabled
                                     AND s.consecutive_failures + 1 >= $7
                                THEN $3 ELSE s.disabled_at END,
             last_success_at = CASE WHEN $6::boolean THEN $3 ELSE s.last_success_at END,
             last_failure_at = CASE WHEN $6::boolean THEN s.last_failure_at ELSE $3 END,
             alert_open = CASE WHEN $6::boolean THEN false
                               WHEN NOT $11::boolean AND s.consecutive_failures + 1 >= $12 THEN true
                               ELSE s.alert_open END,
             updated_at = now()
       WHERE s.id = $8
         -- A routine success (healthy subscription, same lastStatus, last success stored less than a
         -- second before) leaves the row alone: see SUCCESS_TIME_GRANULARITY. Its next state is never
         -- 'pending', so the next CTE needs no row from it.
         AND NOT ($6::boolean AND s.consecutive_failures = 0 AND NOT s.alert_open
                  AND s.last_status IS NOT DISTINCT FROM $4
                  AND coalesce(s.last_success_at > $3::timestamptz - ${SUCCESS_TIME_GRANULARITY}, false))
      RETURNING s.deleted_at IS NOT NULL AS deleted, s.consecutive_failures AS failures, s.enabled
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
             replay = d.replay AND next.status = 'pending',
             lease_expires_at = NULL,
             lease_token = NULL
        FROM next
       WHERE d.id = $1 AND d.lease_token = $2
      RETURNING d.id
    )
    SELECT (SELECT failures FROM subscription) AS failures,
           (SELECT enabled FROM subscription) AS enabled,
           (SELECT alert_open FROM before) AS was_alerting,
           EXISTS (SELECT 1 FROM delivery) AS delivery_updated,
           ${COMMIT_WITHOUT_FLUSH} AS commit_without_flush`,
);

/** Step 1 of a claim (see claim): lock the subscriptions that have something sendable. */
const CLAIM_SUBSCRIPTIONS = preparedStatement(
  `WITH RECURSIVE pending AS (
      -- The subscriptions with pending deliveries, one index probe each (a skip scan), never the whole backlog.
      (SELECT d.subscription_id AS id FROM webhook_delivery d
        WHERE d.status = 'pending' ORDER BY d.subscription_id LIMIT 1)
      UNION ALL
      SELECT (SELECT d.subscription_id FROM webhook_delivery d
               WHERE d.status = 'pending' AND d.subscription_id > pending.id
               ORDER BY d.subscription_id LIMIT 1)
        FROM pending WHERE pending.id IS NOT NULL
    ), due AS (
      -- Each one's oldest due delivery (in queue order, past the few leased ones) says when it became due.
      SELECT pending.id AS subscription_id, oldest_due.next_attempt_at AS first_due
        FROM pending
       CROSS JOIN LATERAL (
             SELECT x.next_attempt_at FROM webhook_delivery x
              WHERE x.subscription_id = pending.id AND ${due('x')}
              ORDER BY x.seq LIMIT 1
            ) oldest_due
    )
    SELECT s.id, mode.serial, ${COMMIT_WITHOUT_FLUSH} AS commit_without_flush
      FROM due JOIN webhook_subscription s ON s.id = due.subscription_id
     CROSS JOIN LATERAL (
           SELECT s.consecutive_failures > 0 OR EXISTS (
                    SELECT 1 FROM webhook_delivery r
                     WHERE r.subscription_id = s.id AND r.status = 'pending' AND r.replay) AS serial
          ) mode
     WHERE s.enabled AND s.deleted_at IS NULL
       AND ${leasesHeldBy('s.id')} < CASE WHEN NOT mode.serial THEN $2 ELSE 1 END
       AND (NOT mode.serial OR EXISTS (
             SELECT 1 FROM (SELECT o.next_attempt_at, o.lease_expires_at FROM webhook_delivery o
                             WHERE o.subscription_id = s.id AND o.status = 'pending'
                             ORDER BY o.seq LIMIT 1) oldest
              WHERE oldest.next_attempt_at <= now()
                AND (oldest.lease_expires_at IS NULL OR oldest.lease_expires_at <= now())))
     ORDER BY due.first_due
     LIMIT $1
     FOR NO KEY UPDATE OF s SKIP LOCKED`,
);

/** Step 2 of a claim: lease each locked subscription's due deliveries, up to its cap. */
const CLAIM_DELIVERIES = preparedStatement(
  `WITH picked AS (
      SELECT c.id
        FROM unnest($1::text[], $2::boolean[]) AS sub(id, serial)
       CROSS JOIN LATERAL (SELECT ${leasesHeldBy('sub.id')} AS n) busy
       CROSS JOIN LATERAL (
             SELECT x.id, x.next_attempt_at FROM webhook_delivery x
              WHERE x.subscription_id = sub.id AND ${due('x')}
                AND (NOT sub.serial OR NOT EXISTS (
                      SELECT 1 FROM webhook_delivery o
                       WHERE o.subscription_id = sub.id AND o.status = 'pending' AND o.seq < x.seq))
              ORDER BY x.seq
              LIMIT GREATEST(0, CASE WHEN NOT sub.serial THEN $3 ELSE 1 END - busy.n)
              FOR UPDATE SKIP LOCKED
            ) c
       ORDER BY c.next_attempt_at
       LIMIT $4
    )
    UPDATE webhook_delivery d
       SET lease_expires_at = now() + $5 * interval '1 millisecond', lease_token = $6
      FROM picked, webhook_subscription s
     WHERE d.id = picked.id AND s.id = d.subscription_id
    RETURNING ${CLAIMED_COLUMNS}`,
);

/** The claim's two statements, for the test that their cost does not grow with the backlog. */
export const CLAIM_STATEMENTS = { subscriptions: CLAIM_SUBSCRIPTIONS, deliveries: CLAIM_DELIVERIES } as const;

/**
 * The outbox and its claims. Everything the delivery worker decides is
 * written here, in PostgreSQL, so that a crash at any moment leaves either a
 * pending delivery (sent again) or a recorded outcome, never a lost one.
 */
@Injectable()
export class WebhookDeliveryRepository {
  constructor(
    @InjectRepository(WebhookDeliveryEntity) private readonly deliveries: Repository<WebhookDeliveryEntity>,
    private readonly sender: OutboxSenderId,
    private readonly statements: SqlStatements,
  ) {}

  /**
   * Inserts pending deliveries in the publishing transaction, due at once,
   * and tells every instance's worker (NOTIFY is sent at commit, and only
   * then). A fact already delivered to a subscription is not inserted twice.
   */
  async enqueue(rows: NewDelivery[], manager: EntityManager): Promise<number> {
    if (rows.length === 0) return 0;
    // Signed with this instance's id: its own worker is woken in process at commit (the outbox listener).
    const [counted] = await this.statements.rows<{ pending: number }>(
      ENQUEUE_DELIVERIES,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.subscriptionId),
        rows.map((r) => r.eventType),
        rows.map((r) => r.subjectId),
        rows.map((r) => r.payload),
        rows.map((r) => r.traceId),
        rows.map((r) => r.status),
        DELIVERY_CHANNEL,
        this.sender.id,
      ],
      manager,
    );
    return counted?.pending ?? 0;
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
      const subscriptions = await this.statements.rows<{ id: string; serial: boolean }>(
        CLAIM_SUBSCRIPTIONS,
        [limits.maxDeliveries, limits.perSubscription],
        manager,
      );
      if (subscriptions.length === 0) return [];
      const rows = await this.statements.rows<ClaimedRow>(
        CLAIM_DELIVERIES,
        [
          subscriptions.map((s) => s.id),
          subscriptions.map((s) => s.serial),
          limits.perSubscription,
          limits.maxDeliveries,
          limits.leaseMs,
          limits.leaseToken,
        ],
        manager,
      );
      return rows.map((row) => claimedDelivery(row, limits.leaseToken));
    });
  }

  /**
   * Writes one attempt and its consequences in one statement (one round trip
   * per attempt): the attempt log row, the subscription's lastStatus, health
   * times and failure count (twenty in a row disable it), and the delivery's
   * next state; then, rarely, the warnings it raised. The UPDATE's row lock
   * orders concurrent attempts of a subscription, so each failure count is
   * reached once; `recovered` compares with the row as the statement found
   * it, exact because a failing subscription has one attempt in flight. The
   * delivery is only updated while this worker still holds its lease; a
   * retry planned for a since-deleted subscription becomes `dropped`. A
   * manual attempt (resend) that fails is not counted: an operator's probe
   * never disables a subscription.
   */
  async recordAttempt(record: AttemptRecord): Promise<AttemptRecorded> {
    const { delivery } = record;
    const manual = record.trigger === 'manual';
    const rows: Array<{
      failures: number | null;
      enabled: boolean | null;
      was_alerting: boolean | null;
      delivery_updated: boolean;
    }> = await this.statements.rows(RECORD_ATTEMPT, [
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
      manual,
      FAILING_WARNING_AT[0],
    ]);
    const row = rows[0];
    const warnings = warningsRaised(record.succeeded, manual, row);
    // Rare (a handful per outage), so written apart from the hot statement above.
    if (warnings.length > 0) {
      await this.deliveries.query(
        `INSERT INTO webhook_warning (subscription_id, at, kind, consecutive_failures)
         SELECT $1, $2, w.kind, w.failures FROM unnest($3::text[], $4::int[]) WITH ORDINALITY AS w(kind, failures, n)
          ORDER BY w.n`,
        [
          delivery.subscriptionId,
          record.attemptedAt,
          warnings.map((warning) => warning.kind),
          warnings.map((warning) => warning.consecutiveFailures),
        ],
      );
    }
    return {
      deliveryUpdated: row?.delivery_updated ?? false,
      disabledNow: warnings.some((warning) => warning.kind === 'disabled'),
      warnings,
    };
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
  async listForSubscription(subscriptionId: string, limit: number, onlyDeliveryId?: string): Promise<DeliveryRow[]> {
    const rows: Array<{
      id: string;
      event_type: WebhookEventType;
      status: DeliveryStatus;
      attempts: number;
      last_status: string | null;
      next_attempt_at: Date | null;
      created_at: Date;
      trace_id: string | null;
    }> = await this.deliveries.query(
      `SELECT ${DELIVERY_COLUMNS}
         FROM webhook_delivery WHERE subscription_id = $1 AND ($3::text IS NULL OR id = $3)
        ORDER BY seq DESC LIMIT $2`,
      [subscriptionId, limit, onlyDeliveryId ?? null],
    );
    if (rows.length === 0) return [];
    const attempts: Array<{
      delivery_id: string;
      attempted_at: Date;
      outcome: string;
      duration_ms: number;
      triggered_by: AttemptTrigger;
    }> = await this.deliveries.query(
      `SELECT delivery_id, attempted_at, outcome, duration_ms, triggered_by FROM webhook_delivery_attempt
        WHERE delivery_id = ANY ($1::text[]) ORDER BY id`,
      [rows.map((row) => row.id)],
    );
    const logs = new Map<string, DeliveryRow['attemptLog']>();
    for (const attempt of attempts) {
      const log = logs.get(attempt.delivery_id) ?? [];
      log.push({
        at: attempt.attempted_at,
        outcome: attempt.outcome,
        durationMs: attempt.duration_ms,
        trigger: attempt.triggered_by,
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
    const rows = await returningRows<ClaimedRow>(
      this.deliveries.manager,
      `UPDATE webhook_delivery d
          SET status = 'pending', next_attempt_at = now(), completed_at = NULL, retry_from = d.attempts,
              replay = false, lease_expires_at = now() + $3 * interval '1 millisecond', lease_token = $4
         FROM webhook_subscription s
        WHERE d.id = $2 AND d.subscription_id = $1 AND s.id = d.subscription_id AND d.status <> 'pending'
       RETURNING ${CLAIMED_COLUMNS}`,
      [subscriptionId, deliveryId, lease.leaseMs, lease.leaseToken],
    );
    const [claimed] = rows;
    if (claimed !== undefined) return claimedDelivery(claimed, lease.leaseToken);
    const existing: Array<{ status: string }> = await this.deliveries.query(
      `SELECT status FROM webhook_delivery WHERE id = $2 AND subscription_id = $1`,
      [subscriptionId, deliveryId],
    );
    return existing.length > 0 ? 'pending' : null;
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
    return this.deliveries.manager.transaction(async (manager) => {
      const queued = await returningRows<{ id: string }>(
        manager,
        `UPDATE webhook_delivery d
            SET status = 'pending', next_attempt_at = now(), completed_at = NULL, retry_from = d.attempts,
                replay = true, lease_expires_at = NULL, lease_token = NULL
          WHERE d.id IN (SELECT x.id FROM webhook_delivery x
                          WHERE x.subscription_id = $1 AND x.status IN ('failed', 'dropped', 'skipped')
                            AND x.created_at >= $2 AND ($3::timestamptz IS NULL OR x.created_at < $3)
                          ORDER BY x.seq
                          LIMIT $4
                          FOR UPDATE SKIP LOCKED)
         RETURNING d.id`,
        [subscriptionId, window.since, window.until, limit],
      );
      const rest: Array<{ n: number }> = await manager.query(
        `SELECT count(*)::int AS n FROM webhook_delivery
          WHERE subscription_id = $1 AND status IN ('failed', 'dropped', 'skipped')
            AND created_at >= $2 AND ($3::timestamptz IS NULL OR created_at < $3)`,
        [subscriptionId, window.since, window.until],
      );
      if (queued.length > 0) await manager.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
      return { queued: queued.length, remaining: rest[0]?.n ?? 0 };
    });
  }

  /**
   * One batch of the retention purge: final deliveries completed more than
   * `retentionDays` ago (their attempts go with them). SKIP LOCKED and a
   * small batch keep it out of the worker's way: it never waits on a row a
   * claim or an attempt holds, and each statement is short.
   */
  async purgeFinished(retentionDays: number, batch: number): Promise<number> {
    const deleted = await returningRows<{ id: string }>(
      this.deliveries.manager,
      `DELETE FROM webhook_delivery
        WHERE id IN (SELECT id FROM webhook_delivery
                      WHERE status <> 'pending' AND completed_at < now() - $1 * interval '1 day'
                      ORDER BY completed_at
                      LIMIT $2
                      FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [retentionDays, batch],
    );
    return deleted.length;
  }
}
