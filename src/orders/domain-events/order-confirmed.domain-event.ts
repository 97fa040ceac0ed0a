import type { DomainEvent } from '../../common/domain-events/domain-event';
import type { OrderWebhookData } from '../dto/order.dto';

/**
 * An order moved from pending to confirmed (or was created confirmed).
 * Published inside the transaction whose conditional update made that
 * transition, so it happens exactly once per order. It carries its
 * webhooks' `data`, taken from that statement, so no listener reads the order back.
 */
export class OrderConfirmedDomainEvent implements DomainEvent {
  static readonly type = 'order.confirmed';
  readonly type = OrderConfirmedDomainEvent.type;

  constructor(
    readonly orderId: string,
    readonly eventId: string | null,
    /** The organiser that owns the order's event: the recipient of `order.confirmed`; null when none does. */
    readonly organizerId: string | null,
    readonly data: OrderWebhookData,
    readonly occurredAt: Date,
    readonly traceId: string,
  ) {}
}
