import { Column, Entity, PrimaryColumn } from 'typeorm';
import { safeIntegerTransformer } from './safe-integer.transformer';

/** One line of an order, written with it and never changed (a trigger refuses updates). */
@Entity('order_line_item')
export class OrderLineItemEntity {
  @PrimaryColumn({ name: 'order_id', type: 'text', collation: 'C' })
  orderId!: string;

  /** Index of the line within the order, as given at creation. */
  @PrimaryColumn({ type: 'integer' })
  position!: number;

  @Column({ type: 'bigint', transformer: safeIntegerTransformer })
  quantity!: number;

  @Column({ name: 'unit_amount_minor', type: 'bigint', nullable: true, transformer: safeIntegerTransformer })
  unitAmountMinor!: number | null;
}
