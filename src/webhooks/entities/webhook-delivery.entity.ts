import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { WebhookEventType } from '../webhook-event-types';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dropped' | 'skipped';

/**
 * One envelope for one subscription while it is not final: the queue's row
 * (the outbox). A final delivery lives in `webhook_delivery_history`, by day
 * of completion (migration DeliveryQueueAndHistory).
 */
@Entity('webhook_delivery')
export class WebhookDeliveryEntity {
  /** The envelope `id` and `Service-Delivery` (a uuid). */
  @PrimaryColumn({ type: 'text', collation: 'C' }) id!: string;
  @Column({ type: 'bigint', insert: false, update: false }) seq!: string;
  @Column({ name: 'subscription_id', type: 'text', collation: 'C' }) subscriptionId!: string;
  @Column({ name: 'event_type', type: 'text' }) eventType!: WebhookEventType;
  /** The order or event the fact is about. */
  @Column({ name: 'subject_id', type: 'text', collation: 'C' }) subjectId!: string;
  /** The exact bytes every attempt sends and signs. */
  @Column({ type: 'bytea' }) payload!: Buffer;
  /** Always `pending` here; the history holds the final states. */
  @Column({ type: 'text', default: 'pending' }) status!: DeliveryStatus;
  @Column({ type: 'integer', default: 0 }) attempts!: number;
  @Column({ name: 'last_status', type: 'text', nullable: true }) lastStatus!: string | null;
  @Column({ name: 'next_attempt_at', type: 'timestamptz', precision: 3, nullable: true }) nextAttemptAt!: Date | null;
  /** While in the future, one worker owns the next attempt; a crashed worker's claim simply expires. */
  @Column({ name: 'lease_expires_at', type: 'timestamptz', precision: 3, nullable: true })
  leaseExpiresAt!: Date | null;
  @Column({ name: 'lease_token', type: 'text', nullable: true }) leaseToken!: string | null;
  /** W3C trace id of the request (or operation) that caused it; every attempt sends it in `traceparent`. */
  @Column({ name: 'trace_id', type: 'text', nullable: true }) traceId!: string | null;
  /** Attempts made before the current retry schedule began (recovery starts a fresh one). */
  @Column({ name: 'retry_from', type: 'integer', default: 0 }) retryFrom!: number;
  /** Queued again by recovery: its subscription is sent one delivery at a time until it is done. */
  @Column({ type: 'boolean', default: false }) replay!: boolean;
  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' }) createdAt!: Date;
}
