import type { DomainEvent } from '../../common/domain-events/domain-event';

/**
 * An event became `public` for the first time. Published inside the
 * transaction that set `first_published_at`, so it happens exactly once.
 */
export class EventPublishedDomainEvent implements DomainEvent {
  static readonly type = 'event.published';
  readonly type = EventPublishedDomainEvent.type;

  constructor(
    readonly eventId: string,
    readonly organizerId: string | null,
    readonly occurredAt: Date,
  ) {}
}
