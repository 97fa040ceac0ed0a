import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { OrderStatus } from '../order-status';
import { safeIntegerTransformer } from './safe-integer.transformer';

@Entity('order')
export class OrderEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id!: string;

  @Column({ name: 'event_id', type: 'text', collation: 'C', nullable: true })
  eventId!: string | null;

  /**
   * A copy of the event's organiser, taken when the order is created and kept
   * equal to it by database triggers; it lets GET /v1/orders read one index.
   */
  @Column({ name: 'organizer_id', type: 'text', collation: 'C', nullable: true })
  organizerId!: string | null;

  @Column({ type: 'text' })
  status!: OrderStatus;

  @Column({ name: 'is_rsvp', type: 'boolean' })
  isRsvp!: boolean;

  /** Sum of the line items' quantities, fixed at creation (line items never change). */
  @Column({ type: 'bigint', transformer: safeIntegerTransformer })
  quantity!: number;

  @Column({ name: 'total_amount_minor', type: 'bigint', transformer: safeIntegerTransformer })
  totalAmountMinor!: number;

  /** Stored as given (any case, empty or null); normalised only on output. */
  @Column({ type: 'text', nullable: true })
  currency!: string | null;

  @Column({ name: 'billing_name', type: 'text', nullable: true })
  billingName!: string | null;

  @Column({ name: 'billing_email', type: 'text', nullable: true })
  billingEmail!: string | null;

  @Column({ name: 'attribution_source', type: 'text', nullable: true })
  attributionSource!: string | null;

  @Column({ name: 'payment_provider', type: 'text', nullable: true })
  paymentProvider!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;
}
