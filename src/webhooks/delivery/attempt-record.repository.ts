/**
 * The worker's hot path out: what an attempt leaves behind, written as it
 * ends (the attempt log, the subscription's health and failure count, the
 * delivery's next state or its move into the history, the warnings raised).
 * Apart from the claim because it has rules of its own: outcomes are written
 * in batches (AttemptRecorder gathers them for recordAttempts), and a write
 * refused for want of a day partition makes the days and is made again.
 */

import { Injectable } from '@nestjs/common';
import { sql, sqlText } from '../../database/sql/sql-fragment';
import { defineStatement } from '../../database/sql/sql-statement';
import { Database } from '../../database/sql/sql-target';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';
import type { WebhookWarningKind } from '../entities/webhook-warning.entity';
import { FAILURES_BEFORE_DISABLE, type AttemptOutcome, type AttemptTrigger } from '../webhook-event-types';
import type { ClaimedDelivery } from './claimed-delivery';
import { COMMIT_WITHOUT_FLUSH, intoHistory } from './delivery-fragments';

export interface AttemptRecord {
  delivery: ClaimedDelivery;
  attemptedAt: Date;
  outcome: AttemptOutcome;
  durationMs: number;
  /** The receiver's HTTP status, null without a response. */
  httpStatus: number | null;
  /** The first KiB of the response body, null without a response. */
  responseExcerpt: string | null;
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

/** The first count of consecutive failures that opens an alert (a `failing` warning). */
export const FIRST_FAILING_WARNING_AT = 5;
/** Consecutive failures at which a `failing` warning is recorded. */
export const FAILING_WARNING_AT: readonly number[] = [FIRST_FAILING_WARNING_AT, 10, 15];

/**
 * Warnings an attempt raises, from the subscription as the attempt left it:
 * `failing` at 5, 10 and 15 consecutive failures, `disabled` at the failure
 * that disabled it, `recovered` at the first success after either.
 */
function warningsRaised(
  succeeded: boolean,
  manual: boolean,
  row: { failures: number | null; enabled: boolean | null; was_alerting: boolean | null } | null,
): Array<{ kind: WebhookWarningKind; consecutiveFailures: number }> {
  if (row === null || row.failures === null) return [];
  if (succeeded) return row.was_alerting === true ? [{ kind: 'recovered', consecutiveFailures: 0 }] : [];
  if (manual) return [];
  const raised: Array<{ kind: WebhookWarningKind; consecutiveFailures: number }> = [];
  if (FAILING_WARNING_AT.includes(row.failures)) raised.push({ kind: 'failing', consecutiveFailures: row.failures });
  if (row.enabled === false && row.failures === FAILURES_BEFORE_DISABLE) {
    raised.push({ kind: 'disabled', consecutiveFailures: row.failures });
  }
  return raised;
}

/**
 * How stale the subscription row's last success time may be. A busy
 * subscription succeeds many times a second, and writing its row for each
 * success (a new row version, under the row's lock, which every other
 * attempt of the subscription then queues for) would dominate the cost of a
 * delivery. So a success that changes nothing else is written only when the
 * stored time is this old; the health read takes the latest success from the
 * attempt log as well, which every success is written to. Every delivery
 * queued and every claim reads the row, and while a long transaction holds
 * the xmin horizon none of its old versions can be pruned: ten seconds keeps
 * that chain a tenth as long as one second did.
 */
const SUCCESS_TIME_GRANULARITY = sqlText(`interval '10 seconds'`);

interface RecordAttemptParams {
  deliveryId: string;
  leaseToken: string;
  attemptedAt: Date;
  outcome: string;
  durationMs: number;
  httpStatus: number | null;
  responseExcerpt: string | null;
  succeeded: boolean;
  failuresBeforeDisable: number;
  subscriptionId: string;
  nextStatus: DeliveryStatus;
  retryInMs: number;
  manual: boolean;
  failingWarningFrom: number;
}

interface RecordAttemptRow {
  failures: number | null;
  enabled: boolean | null;
  was_alerting: boolean | null;
  delivery_updated: boolean;
}

/** One attempt and its consequences (see recordAttempt): the statement of every delivery, so prepared. */
export const RECORD_ATTEMPT = defineStatement<RecordAttemptParams, RecordAttemptRow>(
  (p) => sql`WITH before AS (
      SELECT alert_open FROM webhook_subscription WHERE id = ${p.subscriptionId}
    ), attempt AS (
      INSERT INTO webhook_delivery_attempt
             (delivery_id, attempted_at, outcome, duration_ms, http_status, response_excerpt, triggered_by)
      VALUES (${p.deliveryId}, ${p.attemptedAt}, ${p.outcome}, ${p.durationMs}, ${p.httpStatus}::smallint,
              ${p.responseExcerpt}::text, CASE WHEN ${p.manual}::boolean THEN 'manual' ELSE 'scheduled' END)
    ), subscription AS (
      UPDATE webhook_subscription s
         SET last_status = ${p.outcome},
             consecutive_failures = CASE WHEN ${p.succeeded}::boolean THEN 0
                                         WHEN ${p.manual}::boolean THEN s.consecutive_failures
                                         ELSE s.consecutive_failures + 1 END,
             enabled = CASE WHEN NOT ${p.succeeded}::boolean AND NOT ${p.manual}::boolean
                                 AND s.consecutive_failures + 1 >= ${p.failuresBeforeDisable}
                            THEN false ELSE s.enabled END,
             disabled_at = CASE WHEN NOT ${p.succeeded}::boolean AND NOT ${p.manual}::boolean AND s.enabled
                                     AND s.consecutive_failures + 1 >= ${p.failuresBeforeDisable}
                                THEN ${p.attemptedAt} ELSE s.disabled_at END,
             -- The mark every delivery skipped from now on is numbered above, however early its publishing
             -- transaction began (see migration SkippedSinceDisabled): drawn only by the disabling attempt.
             disabled_seq = CASE WHEN NOT ${p.succeeded}::boolean AND NOT ${p.manual}::boolean AND s.enabled
                                      AND s.consecutive_failures + 1 >= ${p.failuresBeforeDisable}
                                 THEN nextval('webhook_delivery_seq') ELSE s.disabled_seq END,
             last_success_at = CASE WHEN ${p.succeeded}::boolean THEN ${p.attemptedAt} ELSE s.last_success_at END,
             last_failure_at = CASE WHEN ${p.succeeded}::boolean THEN s.last_failure_at ELSE ${p.attemptedAt} END,
             alert_open = CASE WHEN ${p.succeeded}::boolean THEN false
                               WHEN NOT ${p.manual}::boolean
                                    AND s.consecutive_failures + 1 >= ${p.failingWarningFrom} THEN true
                               ELSE s.alert_open END,
             updated_at = now()
       WHERE s.id = ${p.subscriptionId}
         -- Only the holder of the delivery's lease speaks for the subscription: a worker that outlived its lease
         -- (frozen, its attempt timed out by its own clock) logs the attempt it made, but its outcome neither
         -- counts towards disabling nor becomes lastStatus; the holder's does.
         AND EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.id = ${p.deliveryId} AND d.lease_token = ${p.leaseToken})
         -- A routine success (healthy subscription, same lastStatus, last success stored less than a
         -- second before) leaves the row alone: see SUCCESS_TIME_GRANULARITY. Its next state is never
         -- 'pending', so the next CTE needs no row from it.
         AND NOT (${p.succeeded}::boolean AND s.consecutive_failures = 0 AND NOT s.alert_open
                  AND s.last_status IS NOT DISTINCT FROM ${p.outcome}
                  AND coalesce(s.last_success_at > ${p.attemptedAt}::timestamptz - ${SUCCESS_TIME_GRANULARITY}, false))
      RETURNING s.deleted_at IS NOT NULL AS deleted, s.consecutive_failures AS failures, s.enabled
    ), next AS (
      SELECT CASE WHEN ${p.nextStatus}::text = 'pending' AND coalesce((SELECT deleted FROM subscription), true)
                  THEN 'dropped' ELSE ${p.nextStatus}::text END AS status
    ), retry AS (
      -- Still pending: a retry, written in place (no indexed column changes, so a HOT update).
      UPDATE webhook_delivery d
         SET attempts = d.attempts + 1,
             last_status = ${p.outcome},
             next_attempt_at = now() + ${p.retryInMs}::double precision * interval '1 millisecond',
             lease_expires_at = NULL,
             lease_token = NULL
        FROM next
       WHERE d.id = ${p.deliveryId} AND d.lease_token = ${p.leaseToken} AND next.status = 'pending'
      RETURNING d.id
    ), gone AS (
      -- Final: out of the queue and into today's history, in this same statement.
      DELETE FROM webhook_delivery d
       USING next
       WHERE d.id = ${p.deliveryId} AND d.lease_token = ${p.leaseToken} AND next.status <> 'pending'
      RETURNING d.*, next.status AS final_status, d.attempts + 1 AS final_attempts,
                ${p.outcome}::text AS final_last_status
    ), history AS (
      ${intoHistory('gone')}
    ), delivery AS (
      SELECT id FROM retry UNION ALL SELECT id FROM gone
    )
    SELECT (SELECT failures FROM subscription) AS failures,
           (SELECT enabled FROM subscription) AS enabled,
           (SELECT alert_open FROM before) AS was_alerting,
           EXISTS (SELECT 1 FROM delivery) AS delivery_updated,
           ${COMMIT_WITHOUT_FLUSH} AS commit_without_flush`,
  { prepared: true },
);

interface RecordSuccessesParams {
  deliveryIds: string[];
  leaseTokens: string[];
  subscriptionIds: string[];
  attemptedAts: Date[];
  outcomes: string[];
  durationsMs: number[];
  httpStatuses: Array<number | null>;
  responseExcerpts: Array<string | null>;
  manual: boolean[];
}

interface RecordSuccessesRow {
  /** The attempt's place in the batch, from 1. */
  n: number;
  delivery_updated: boolean;
  /** The subscription was alerting and this is its first success of the batch. */
  recovered: boolean;
}

/**
 * Successful attempts, many at once (see recordAttempts): what RECORD_ATTEMPT
 * does for each, in one statement. A subscription's successes in the batch
 * leave its row as they would one by one: failures cleared, the alert closed
 * (`recovered` once, by the first of them), lastStatus the last one's; and
 * the row is written only when one of them is not routine (see
 * SUCCESS_TIME_GRANULARITY), then with the last one's time. Rows that are
 * written are locked first in id order, and the deliveries only after those
 * locks, so two recorders (instances) never wait for each other in a cycle.
 * The attempt log rows are inserted in batch order. Prepared: at volume this
 * is the statement of nearly every delivery.
 */
export const RECORD_SUCCESSES = defineStatement<RecordSuccessesParams, RecordSuccessesRow>(
  (p) => sql`WITH r AS (
      SELECT * FROM unnest(${p.deliveryIds}::text[], ${p.leaseTokens}::text[], ${p.subscriptionIds}::text[],
                           ${p.attemptedAts}::timestamptz[], ${p.outcomes}::text[], ${p.durationsMs}::int[],
                           ${p.httpStatuses}::smallint[], ${p.responseExcerpts}::text[], ${p.manual}::boolean[])
             WITH ORDINALITY
             AS r(delivery_id, lease_token, subscription_id, attempted_at, outcome, duration_ms, http_status,
                  response_excerpt, manual, n)
    ), batch AS (
      SELECT r.subscription_id,
             min(r.n) AS first_n,
             (array_agg(r.outcome ORDER BY r.n DESC))[1] AS last_outcome,
             (array_agg(r.attempted_at ORDER BY r.n DESC))[1] AS last_at,
             count(DISTINCT r.outcome) = 1 AS one_outcome,
             max(r.attempted_at) AS latest
        FROM r GROUP BY r.subscription_id
    ), stale AS (
      SELECT s.id, s.alert_open AS was_alerting, batch.first_n, batch.last_outcome, batch.last_at
        FROM webhook_subscription s JOIN batch ON batch.subscription_id = s.id
       WHERE NOT (s.consecutive_failures = 0 AND NOT s.alert_open AND batch.one_outcome
                  AND s.last_status IS NOT DISTINCT FROM batch.last_outcome
                  AND coalesce(s.last_success_at > batch.latest - ${SUCCESS_TIME_GRANULARITY}, false))
       ORDER BY s.id
       FOR NO KEY UPDATE OF s
    ), locked AS (
      SELECT count(*) AS n FROM stale
    ), subscription AS (
      UPDATE webhook_subscription s
         SET last_status = stale.last_outcome,
             consecutive_failures = 0,
             last_success_at = stale.last_at,
             alert_open = false,
             updated_at = now()
        FROM stale
       WHERE s.id = stale.id
      RETURNING stale.first_n, stale.was_alerting
    ), attempt AS (
      INSERT INTO webhook_delivery_attempt
             (delivery_id, attempted_at, outcome, duration_ms, http_status, response_excerpt, triggered_by)
      SELECT r.delivery_id, r.attempted_at, r.outcome, r.duration_ms, r.http_status, r.response_excerpt,
             CASE WHEN r.manual THEN 'manual' ELSE 'scheduled' END
        FROM r ORDER BY r.n
    ), gone AS (
      -- Out of the queue and into today's history. Joined with the count of locked rows: no delivery
      -- row is touched before the subscription locks are held.
      -- By primary key (= ANY): the queue is often analysed empty, and a join would then read it whole.
      DELETE FROM webhook_delivery d
       USING locked
       WHERE d.id = ANY (${p.deliveryIds}::text[]) AND locked.n >= 0
         AND EXISTS (SELECT 1 FROM r WHERE r.delivery_id = d.id AND r.lease_token = d.lease_token)
      RETURNING d.*, (SELECT r.n FROM r WHERE r.delivery_id = d.id) AS n, 'succeeded'::text AS final_status,
                d.attempts + 1 AS final_attempts,
                (SELECT r.outcome FROM r WHERE r.delivery_id = d.id) AS final_last_status
    ), history AS (
      ${intoHistory('gone')}
    ), delivery AS (
      SELECT gone.n FROM gone
    )
    SELECT r.n::int AS n,
           r.n IN (SELECT delivery.n FROM delivery) AS delivery_updated,
           coalesce(subscription.was_alerting, false) AS recovered,
           ${COMMIT_WITHOUT_FLUSH} AS commit_without_flush
      FROM r LEFT JOIN subscription ON subscription.first_n = r.n
     ORDER BY r.n`,
  { prepared: true },
);

/** The warnings an attempt raised, in order; rare (a handful per outage), so apart from the hot statement. */
const INSERT_WARNINGS = defineStatement<{
  subscriptionId: string;
  at: Date;
  kinds: WebhookWarningKind[];
  failures: number[];
}>(
  (p) => sql`INSERT INTO webhook_warning (subscription_id, at, kind, consecutive_failures)
         SELECT ${p.subscriptionId}, ${p.at}, w.kind, w.failures
           FROM unnest(${p.kinds}::text[], ${p.failures}::int[]) WITH ORDINALITY AS w(kind, failures, n)
          ORDER BY w.n`,
  { prepared: false },
);

/**
 * Makes the history's and the attempt log's partitions from yesterday (an
 * attempt's time is the worker's clock) to a week ahead, where missing; the
 * retention job keeps them a week ahead, so this runs only when it could not.
 */
const ENSURE_RECENT_PARTITIONS = defineStatement<Record<string, never>, { made: number }>(
  () => sql`SELECT webhook_history_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 1,
                                                   (now() AT TIME ZONE 'UTC')::date + 7) AS made`,
  { prepared: false },
);

/** PostgreSQL refused a row no partition takes (a day whose partition was never made). */
function isMissingPartition(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as Error & { code?: string }).code === '23514' &&
    error.message.startsWith('no partition of relation')
  );
}

/**
 * Everything the worker learns from an attempt, written in PostgreSQL before
 * the attempt counts as done: a crash at any moment leaves either a pending
 * delivery (sent again) or a recorded outcome, never a lost one.
 */
@Injectable()
export class AttemptRecordRepository {
  constructor(private readonly database: Database) {}

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
    const row = await this.withDayPartitions(() =>
      RECORD_ATTEMPT.one(
        {
          deliveryId: delivery.id,
          leaseToken: delivery.leaseToken,
          attemptedAt: record.attemptedAt,
          outcome: String(record.outcome),
          durationMs: record.durationMs,
          httpStatus: record.httpStatus,
          responseExcerpt: record.responseExcerpt,
          succeeded: record.succeeded,
          failuresBeforeDisable: FAILURES_BEFORE_DISABLE,
          subscriptionId: delivery.subscriptionId,
          nextStatus: record.next.status,
          retryInMs: record.next.retryInMs ?? 0,
          manual,
          failingWarningFrom: FIRST_FAILING_WARNING_AT,
        },
        this.database,
      ),
    );
    const warnings = warningsRaised(record.succeeded, manual, row);
    if (warnings.length > 0) {
      await INSERT_WARNINGS.affected(
        {
          subscriptionId: delivery.subscriptionId,
          at: record.attemptedAt,
          kinds: warnings.map((warning) => warning.kind),
          failures: warnings.map((warning) => warning.consecutiveFailures),
        },
        this.database,
      );
    }
    return {
      deliveryUpdated: row?.delivery_updated ?? false,
      disabledNow: warnings.some((warning) => warning.kind === 'disabled'),
      warnings,
    };
  }

  /**
   * Records attempts that finished together, with the outcome rows one by one
   * in this order would leave. Successes, the common case at volume, are
   * written by one statement (RECORD_SUCCESSES) whatever their number; a
   * subscription with a failure among them has all of its attempts recorded
   * one by one, in order, since failure counts and warnings depend on each
   * step. Each attempt settles on its own: one whose write failed is left to
   * its lease, which expires, and the delivery is attempted again.
   */
  async recordAttempts(records: readonly AttemptRecord[]): Promise<Array<PromiseSettledResult<AttemptRecorded>>> {
    const results = new Array<PromiseSettledResult<AttemptRecorded>>(records.length);
    const bySubscription = new Map<string, number[]>();
    records.forEach((record, i) => {
      const indices = bySubscription.get(record.delivery.subscriptionId);
      if (indices === undefined) bySubscription.set(record.delivery.subscriptionId, [i]);
      else indices.push(i);
    });
    const together: number[] = [];
    const apart: number[][] = [];
    for (const indices of bySubscription.values()) {
      if (indices.every((i) => records[i]!.succeeded)) together.push(...indices);
      else apart.push(indices);
    }
    together.sort((a, b) => a - b);
    if (together.length === 1) apart.push(together.splice(0));
    const writes = apart.map(async (indices) => {
      for (const i of indices) {
        results[i] = await this.recordAttempt(records[i]!).then(
          (value) => ({ status: 'fulfilled' as const, value }),
          (reason: unknown) => ({ status: 'rejected' as const, reason }),
        );
      }
    });
    if (together.length > 0) {
      writes.push(
        this.recordSuccesses(together.map((i) => records[i]!)).then(
          (recorded) => recorded.forEach((value, k) => (results[together[k]!] = { status: 'fulfilled', value })),
          (reason: unknown) => together.forEach((i) => (results[i] = { status: 'rejected', reason })),
        ),
      );
    }
    await Promise.all(writes);
    return results;
  }

  /** Successful attempts in one statement (RECORD_SUCCESSES), then the rare `recovered` warnings. */
  private async recordSuccesses(records: readonly AttemptRecord[]): Promise<AttemptRecorded[]> {
    const rows = await this.withDayPartitions(() =>
      RECORD_SUCCESSES.rows(
        {
          deliveryIds: records.map((r) => r.delivery.id),
          leaseTokens: records.map((r) => r.delivery.leaseToken),
          subscriptionIds: records.map((r) => r.delivery.subscriptionId),
          attemptedAts: records.map((r) => r.attemptedAt),
          outcomes: records.map((r) => String(r.outcome)),
          durationsMs: records.map((r) => r.durationMs),
          httpStatuses: records.map((r) => r.httpStatus),
          responseExcerpts: records.map((r) => r.responseExcerpt),
          manual: records.map((r) => r.trigger === 'manual'),
        },
        this.database,
      ),
    );
    const recorded = records.map((): AttemptRecorded => ({ deliveryUpdated: false, disabledNow: false, warnings: [] }));
    for (const row of rows) {
      const result = recorded[row.n - 1];
      if (result === undefined) continue;
      result.deliveryUpdated = row.delivery_updated;
      if (row.recovered) result.warnings.push({ kind: 'recovered', consecutiveFailures: 0 });
    }
    for (const [i, result] of recorded.entries()) {
      if (result.warnings.length === 0) continue;
      const record = records[i]!;
      await INSERT_WARNINGS.affected(
        {
          subscriptionId: record.delivery.subscriptionId,
          at: record.attemptedAt,
          kinds: result.warnings.map((warning) => warning.kind),
          failures: result.warnings.map((warning) => warning.consecutiveFailures),
        },
        this.database,
      );
    }
    return recorded;
  }

  /**
   * Runs a write that moves deliveries into the history. Should a day have
   * no partition (the retention job makes them a week ahead, so only when it
   * has not run for that long), PostgreSQL refuses the whole statement: the
   * deliveries stay in the queue under their leases and nothing is lost. The
   * missing days are then made and the write is made again, once.
   */
  private async withDayPartitions<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!isMissingPartition(error)) throw error;
      await ENSURE_RECENT_PARTITIONS.one({}, this.database);
      return write();
    }
  }
}
