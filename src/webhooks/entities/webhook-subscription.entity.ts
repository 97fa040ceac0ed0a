import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SubscriberType, WebhookEventType } from '../webhook-event-types';

@Entity('webhook_subscription')
export class WebhookSubscriptionEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' }) id!: string;
  @Column({ name: 'principal_type', type: 'text' }) principalType!: SubscriberType;
  @Column({ name: 'principal_id', type: 'text', collation: 'C' }) principalId!: string;
  @Column({ type: 'text' }) url!: string;
  @Column({ type: 'text', array: true }) events!: WebhookEventType[];
  /** Sealed with AES-256-GCM (see WebhookSecretCipher); never the plaintext when a key is configured. */
  @Column({ name: 'secret_sealed', type: 'text' }) secretSealed!: string;
  /** The secret a rotation replaced, sealed like the current one; it signs too until previousSecretExpiresAt. */
  @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true }) previousSecretSealed!: string | null;
  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', precision: 3, nullable: true })
  previousSecretExpiresAt!: Date | null;
  @Column({ type: 'boolean', default: true }) enabled!: boolean;
  /** When it was last disabled (by failures or at creation); where `enable` with recovery starts. */
  @Column({ name: 'disabled_at', type: 'timestamptz', precision: 3, nullable: true }) disabledAt!: Date | null;
  @Column({ name: 'last_success_at', type: 'timestamptz', precision: 3, nullable: true }) lastSuccessAt!: Date | null;
  @Column({ name: 'last_failure_at', type: 'timestamptz', precision: 3, nullable: true }) lastFailureAt!: Date | null;
  /** A failing or disabled warning is open: the next success records `recovered`. */
  @Column({ name: 'alert_open', type: 'boolean', default: false }) alertOpen!: boolean;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  /** An HTTP status as digits, or `timeout`, `network_error`, `blocked_host`. */
  @Column({ name: 'last_status', type: 'text', nullable: true }) lastStatus!: string | null;
  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 }) consecutiveFailures!: number;
  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3, default: () => 'now()' }) updatedAt!: Date;
  @Column({ name: 'deleted_at', type: 'timestamptz', precision: 3, nullable: true }) deletedAt!: Date | null;
}
