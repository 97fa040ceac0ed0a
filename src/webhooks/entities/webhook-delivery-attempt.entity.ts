import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Every attempt, successful or not: the deliveries table is the truth, never a log line. */
@Entity('webhook_delivery_attempt')
export class WebhookDeliveryAttemptEntity {
  @PrimaryColumn({ type: 'bigint', insert: false, update: false }) id!: string;
  @Column({ name: 'delivery_id', type: 'text', collation: 'C' }) deliveryId!: string;
  @Column({ name: 'attempted_at', type: 'timestamptz', precision: 3 }) attemptedAt!: Date;
  /** An HTTP status as digits, or `timeout`, `network_error`, `blocked_host`. */
  @Column({ type: 'text' }) outcome!: string;
  @Column({ name: 'duration_ms', type: 'integer' }) durationMs!: number;
  /** `scheduled` (the worker) or `manual` (a resend). */
  /** The receiver's HTTP status; null without a response (and for attempts made before it was recorded). */
  @Column({ name: 'http_status', type: 'smallint', nullable: true }) httpStatus!: number | null;
  /** The first KiB of the receiver's response body, as text. */
  @Column({ name: 'response_excerpt', type: 'text', nullable: true }) responseExcerpt!: string | null;
  @Column({ name: 'triggered_by', type: 'text', default: 'scheduled' }) triggeredBy!: 'scheduled' | 'manual';
}
