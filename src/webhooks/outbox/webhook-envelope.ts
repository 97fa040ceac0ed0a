import type { SubscriberType, WebhookEventType } from '../webhook-event-types';

/** api-v1.md "Webhook delivery envelope". */
export interface WebhookEnvelope<Data extends object = object> {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  principal: { type: SubscriberType; id: string };
  data: Data;
}

/**
 * Serialises an envelope once, into the bytes stored with the delivery and
 * sent by every attempt. Members are written in the contract's order.
 */
export function serialiseEnvelope(envelope: WebhookEnvelope): Buffer {
  const ordered: WebhookEnvelope = {
    id: envelope.id,
    type: envelope.type,
    createdAt: envelope.createdAt,
    principal: { type: envelope.principal.type, id: envelope.principal.id },
    data: envelope.data,
  };
  return Buffer.from(JSON.stringify(ordered), 'utf8');
}
