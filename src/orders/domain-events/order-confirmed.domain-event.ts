import type { DomainEvent } from '../../common/domain-events/domain-event';

/**
 * An order moved from pending to confirmed (or was created confirmed).
 * Published inside the transaction whose conditional update made that
 * transition, so it happens exactly once per order.
 */
export class OrderConfirmedDomainEvent implements DomainEvent {
  static readonly type = 'order.confirmed';
  readonly type = OrderConfirmedDomainEvent.type;

  constructor(
    readonly orderId: string,
    readonly eventId: string | null,
    /** The organiser that owns the order's event: the recipient of `order.confirmed`; null when none does. */
    readonly organizerId: string | null,
    readonly occurredAt: Date,
    readonly traceId: string,
  ) {}
}
