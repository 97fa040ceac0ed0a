import type { DomainEvent } from '../../common/domain-events/domain-event';
import type { EventPublishedData } from '../dto/event.dto';

/**
 * An event became `public` for the first time. Published inside the
 * transaction that set `first_published_at`, so it happens exactly once.
 * It carries its webhooks' `data`, taken from the statement that published
 * the event, so no listener reads the event back.
 */
export class EventPublishedDomainEvent implements DomainEvent {
  static readonly type = 'event.published';
  readonly type = EventPublishedDomainEvent.type;

  constructor(
    readonly eventId: string,
    readonly organizerId: string | null,
    /** The venues at whose address the event takes place (owners of its location), so listeners need no join. */
    readonly venueIds: readonly string[],
    readonly data: EventPublishedData,
    readonly occurredAt: Date,
    readonly traceId: string,
  ) {}
}
