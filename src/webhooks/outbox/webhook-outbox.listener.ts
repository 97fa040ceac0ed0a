import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../../common/domain-events/domain-event';
import { COMMITTED } from '../../common/domain-events/domain-event-bus';
import type { Transaction } from '../../database/unit-of-work';
import { EventPublishedDomainEvent } from '../../events/domain-events/event-published.domain-event';
import { OrderConfirmedDomainEvent } from '../../orders/domain-events/order-confirmed.domain-event';
import { WebhookDeliveryWorker } from '../delivery/webhook-delivery.worker';
import { DeliveryQueueRepository } from '../delivery/delivery-queue.repository';
import type { WebhookEventType } from '../webhook-event-types';
import { WebhookSubscriptionRepository, type Recipient } from '../webhook-subscription.repository';
import { serialiseEnvelope } from './webhook-envelope';

/**
 * The outbox: turns a domain fact into one pending delivery per matching
 * enabled subscription (a `skipped` one per disabled subscription, so that
 * recovery can send it later), inside the transaction that made the fact true (the
 * bus hands us that transaction). If it rolls back, no delivery exists; if it
 * commits, the deliveries do, whatever happens to this process next. Errors
 * are not suppressed: a failed insert fails the publishing transaction rather
 * than losing the webhook. Each domain event carries its webhooks' `data`,
 * so the outbox never reads the publisher's tables or calls back into it.
 */
@Injectable()
export class WebhookOutboxListener {
  constructor(
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly deliveries: DeliveryQueueRepository,
    private readonly worker: WebhookDeliveryWorker,
  ) {}

  @OnEvent(OrderConfirmedDomainEvent.type, { suppressErrors: false })
  async onOrderConfirmed(event: OrderConfirmedDomainEvent, tx: Transaction): Promise<void> {
    if (event.organizerId === null) return;
    const recipients = await this.subscriptions.findOrderConfirmedRecipients(event.organizerId, tx);
    if (recipients.length === 0) return;
    await this.enqueue(OrderConfirmedDomainEvent.type, event.orderId, event, recipients, event.data, tx);
  }

  @OnEvent(EventPublishedDomainEvent.type, { suppressErrors: false })
  async onEventPublished(event: EventPublishedDomainEvent, tx: Transaction): Promise<void> {
    const recipients = await this.subscriptions.findEventPublishedRecipients(event.organizerId, event.venueIds, tx);
    if (recipients.length === 0) return;
    await this.enqueue(EventPublishedDomainEvent.type, event.eventId, event, recipients, event.data, tx);
  }

  /** After commit only: the deliveries exist now, so the worker can send them without waiting for its poll. */
  @OnEvent(OrderConfirmedDomainEvent.type + COMMITTED)
  @OnEvent(EventPublishedDomainEvent.type + COMMITTED)
  wakeWorker(): void {
    this.worker.wake();
  }

  private async enqueue(
    type: WebhookEventType,
    subjectId: string,
    cause: DomainEvent,
    recipients: Recipient[],
    data: object,
    tx: Transaction,
  ): Promise<void> {
    const createdAt = cause.occurredAt.toISOString();
    // The trace of the request that made the fact true: every attempt's traceparent continues it.
    const traceId = cause.traceId;
    await this.deliveries.enqueue(
      recipients.map((recipient) => {
        const id = randomUUID();
        return {
          id,
          subscriptionId: recipient.subscriptionId,
          eventType: type,
          subjectId,
          payload: serialiseEnvelope({ id, type, createdAt, principal: recipient.principal, data }),
          traceId,
          status: recipient.enabled ? 'pending' : 'skipped',
        };
      }),
      tx,
    );
  }
}
