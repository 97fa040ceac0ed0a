/**
 * The queue's write path on the API's side: the outbox queues a publication's
 * deliveries, and a subscription's deletion drops what it still has waiting,
 * each inside the caller's transaction. The worker's hot path is apart: its
 * claims in delivery-claim.repository.ts, its attempts' outcomes in
 * attempt-record.repository.ts.
 */

import { Injectable } from '@nestjs/common';
import { sql } from '../../database/sql/sql-fragment';
import { defineStatement } from '../../database/sql/sql-statement';
import type { Transaction } from '../../database/unit-of-work';
import { OutboxSenderId } from '../outbox/outbox-sender-id';
import type { WebhookEventType } from '../webhook-event-types';
import { intoHistory } from './delivery-fragments';

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

/**
 * The outbox insert (see enqueue): a confirmation's deliveries, one row per
 * recipient (pending ones into the queue, `skipped` ones straight into
 * today's history), and the wake-up for every instance's worker in the same
 * round trip (`pg_notify` only when a pending row was inserted; PostgreSQL
 * sends it at commit). Prepared: every confirmation runs it. A fact already
 * waiting in the queue is not queued twice (its unique index); the history
 * is not searched for it: a fact reaches the outbox once (see
 * docs/webhooks.md, "One delivery per fact").
 */
export const ENQUEUE_DELIVERIES = defineStatement<
  {
    ids: string[];
    subscriptionIds: string[];
    eventTypes: string[];
    subjectIds: string[];
    payloads: Buffer[];
    traceIds: string[];
    statuses: string[];
    channel: string;
    sender: string;
  },
  { pending: number }
>(
  (p) => sql`WITH r AS (
      SELECT * FROM unnest(${p.ids}::text[], ${p.subscriptionIds}::text[], ${p.eventTypes}::text[],
                           ${p.subjectIds}::text[], ${p.payloads}::bytea[], ${p.traceIds}::text[], ${p.statuses}::text[])
             WITH ORDINALITY AS r(id, subscription_id, event_type, subject_id, payload, trace_id, status, n)
    ), queued AS (
      INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, trace_id, next_attempt_at)
      SELECT r.id, r.subscription_id, r.event_type, r.subject_id, r.payload, r.trace_id, now()
        FROM r WHERE r.status = 'pending' ORDER BY r.n
      ON CONFLICT (subscription_id, event_type, subject_id) DO NOTHING
      RETURNING 1
    ), skipped AS (
      INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, trace_id, status)
      SELECT r.id, r.subscription_id, r.event_type, r.subject_id, r.payload, r.trace_id, 'skipped'
        FROM r WHERE r.status = 'skipped' ORDER BY r.n
    ), counted AS (
      SELECT count(*)::int AS pending FROM queued
    )
    -- pg_notify returns void: selecting it is how a statement sends the notification.
    SELECT counted.pending, (SELECT pg_notify(${p.channel}, ${p.sender}) WHERE counted.pending > 0) AS wake_workers
      FROM counted`,
  { prepared: true },
);

/** A deleted subscription's queue, dropped (into the history); what is leased (in flight) is left to finish. */
const DROP_PENDING = defineStatement<{ subscriptionId: string }>(
  (p) => sql`WITH gone AS (
      DELETE FROM webhook_delivery
       WHERE subscription_id = ${p.subscriptionId} AND status = 'pending'
         AND (lease_expires_at IS NULL OR lease_expires_at <= now())
      RETURNING *, 'dropped'::text AS final_status, attempts AS final_attempts, last_status AS final_last_status
    )
    ${intoHistory('gone')}`,
  { prepared: false },
);

/**
 * Deliveries left waiting for a deleted subscription, dropped (into the history) as DROP_PENDING drops them: the
 * ones that were in flight when it was deleted and came back without an attempt recorded (leases given back at a
 * shutdown, or expired after a crash). No claim takes a deleted subscription's turn, so nothing else ends them.
 * Read from the deleted subscriptions (few) into the queue's index on the subscription.
 */
const DROP_ORPHANED = defineStatement<{ batch: number }>(
  (p) => sql`WITH gone AS (
      DELETE FROM webhook_delivery d
       WHERE d.id IN (SELECT x.id FROM webhook_subscription s JOIN webhook_delivery x ON x.subscription_id = s.id
                       WHERE s.deleted_at IS NOT NULL AND x.status = 'pending'
                         AND (x.lease_expires_at IS NULL OR x.lease_expires_at <= now())
                       LIMIT ${p.batch}
                         FOR UPDATE OF x SKIP LOCKED)
      RETURNING *, 'dropped'::text AS final_status, attempts AS final_attempts, last_status AS final_last_status
    )
    ${intoHistory('gone')}`,
  { prepared: false },
);

/** Today's history partitions (and tomorrow's, for a transaction that ends after midnight), where missing. */
const ENSURE_TODAY_PARTITIONS = defineStatement<Record<string, never>, { made: number }>(
  () => sql`SELECT webhook_history_ensure_partitions((now() AT TIME ZONE 'UTC')::date,
                                                   (now() AT TIME ZONE 'UTC')::date + 1) AS made`,
  { prepared: false },
);

/**
 * Writes only in the caller's transaction, never in one of its own: a
 * delivery exists exactly when the fact that made it committed, and a
 * deletion rolled back drops nothing.
 */
@Injectable()
export class DeliveryQueueRepository {
  constructor(private readonly sender: OutboxSenderId) {}

  /**
   * Inserts pending deliveries in the publishing transaction, due at once,
   * and tells every instance's worker (NOTIFY is sent at commit, and only
   * then). A fact already delivered to a subscription is not inserted twice.
   */
  async enqueue(rows: NewDelivery[], tx: Transaction): Promise<number> {
    if (rows.length === 0) return 0;
    // A skipped delivery goes straight into today's history, inside the publishing transaction, where a
    // refused write could not be made again: today's partition is made first should it be missing (rare:
    // only disabled subscriptions get skipped deliveries, and the check is a few catalogue look-ups).
    if (rows.some((row) => row.status === 'skipped')) await ENSURE_TODAY_PARTITIONS.one({}, tx);
    const counted = await ENQUEUE_DELIVERIES.one(
      {
        ids: rows.map((r) => r.id),
        subscriptionIds: rows.map((r) => r.subscriptionId),
        eventTypes: rows.map((r) => r.eventType),
        subjectIds: rows.map((r) => r.subjectId),
        payloads: rows.map((r) => r.payload),
        traceIds: rows.map((r) => r.traceId),
        statuses: rows.map((r) => r.status),
        channel: DELIVERY_CHANNEL,
        // Signed with this instance's id: its own worker is woken in process at commit (the outbox listener).
        sender: this.sender.id,
      },
      tx,
    );
    return counted?.pending ?? 0;
  }

  /** A deleted subscription's queue is dropped; an attempt in flight (leased) finishes and is recorded. */
  async dropPending(subscriptionId: string, tx: Transaction): Promise<void> {
    // Into today's history inside the deleting transaction: today's partition first, as for skipped ones.
    await ENSURE_TODAY_PARTITIONS.one({}, tx);
    await DROP_PENDING.affected({ subscriptionId }, tx);
  }

  /**
   * What deleted subscriptions still have waiting and not leased (see DROP_ORPHANED), at most `batch`, dropped:
   * the deliveries that were in flight at the deletion and whose attempt never ended in a record. Returns how many.
   */
  async dropOrphaned(batch: number, tx: Transaction): Promise<number> {
    await ENSURE_TODAY_PARTITIONS.one({}, tx);
    return DROP_ORPHANED.affected({ batch }, tx);
  }
}
