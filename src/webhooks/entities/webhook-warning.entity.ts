import { Column, Entity, PrimaryColumn } from 'typeorm';

export type WebhookWarningKind = 'failing' | 'disabled' | 'recovered';

/** An early warning about a subscription (internal-api.md "Webhook operations"); also written as a log line. */
@Entity('webhook_warning')
export class WebhookWarningEntity {
  @PrimaryColumn({ type: 'bigint', insert: false, update: false }) id!: string;
  @Column({ name: 'subscription_id', type: 'text', collation: 'C' }) subscriptionId!: string;
  @Column({ type: 'timestamptz', precision: 3 }) at!: Date;
  @Column({ type: 'text' }) kind!: WebhookWarningKind;
  @Column({ name: 'consecutive_failures', type: 'integer' }) consecutiveFailures!: number;
}
