import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from '../../../libs/webhooks';
import type { OpenApiFragment } from '../../common/openapi/openapi-fragment';
import type { EventPublishedData } from '../../events/dto/event.dto';
import type { OrderWebhookData } from '../../orders/dto/order.dto';
import {
  EVENT_TYPES_FOR_PRINCIPAL,
  FAILURES_BEFORE_DISABLE,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../webhook-event-types';

type Json = { [key: string]: unknown };

/**
 * The outgoing deliveries in the public document (OpenAPI 3.1 `webhooks`):
 * the envelope, each `data` shape, the headers and how to verify them. The
 * `data` tables are typed against the interfaces the outbox fills, so a
 * member added there and forgotten here does not compile.
 */

const nullableString = { type: ['string', 'null'] };
const dateTime = { type: 'string', format: 'date-time' };

const ORDER_CONFIRMED_DATA: Record<keyof OrderWebhookData, Json> = {
  orderId: { type: 'string' },
  eventId: nullableString,
  totalAmount: {
    type: 'integer',
    description: 'Integer minor units: the same number as the Order `totalAmountMinor`.',
  },
  currency: { type: ['string', 'null'], description: 'Uppercase ISO 4217; `EUR` when none was stored.' },
  isRsvp: { type: 'boolean' },
  quantity: { type: 'integer' },
  billingName: nullableString,
  billingEmail: nullableString,
  paymentProvider: nullableString,
};

const EVENT_PUBLISHED_DATA: Record<keyof EventPublishedData, Json> = {
  eventId: { type: 'string' },
  title: { type: ['string', 'null'], description: 'Flattened to one language.' },
  startTime: { ...dateTime, type: ['string', 'null'] },
  endTime: { ...dateTime, type: ['string', 'null'] },
  url: { type: 'string', format: 'uri' },
};

const objectOf = (properties: Record<string, Json>): Json => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});

const DATA_SCHEMAS: Record<WebhookEventType, { name: string; schema: Json }> = {
  'order.confirmed': { name: 'OrderConfirmedData', schema: objectOf(ORDER_CONFIRMED_DATA) },
  'event.published': { name: 'EventPublishedData', schema: objectOf(EVENT_PUBLISHED_DATA) },
};

const EXAMPLES: Record<WebhookEventType, unknown> = {
  'order.confirmed': {
    id: '0b9d6c8e-2f4a-4c1e-9e51-6a0d3f7b2c11',
    type: 'order.confirmed',
    createdAt: '2027-05-01T18:04:12.345Z',
    principal: { type: 'organiser', id: 'org_01J5Z7Q6W8' },
    data: {
      orderId: 'ord_01J5Z9K2M4',
      eventId: 'evt_01J5Z7Q6W8',
      totalAmount: 4500,
      currency: 'EUR',
      isRsvp: false,
      quantity: 2,
      billingName: 'Ada Lovelace',
      billingEmail: 'ada@example.com',
      paymentProvider: 'stripe',
    },
  },
  'event.published': {
    id: '7c1e5a90-3d2b-4f6e-8a17-2b9c0d4e6f38',
    type: 'event.published',
    createdAt: '2027-04-02T09:00:00.000Z',
    principal: { type: 'venue', id: 'ven_01J5Z8A1B2' },
    data: {
      eventId: 'evt_01J5Z7Q6W8',
      title: 'Jazz night',
      startTime: '2027-05-01T19:00:00.000Z',
      endTime: null,
      url: 'https://events.example.com/events/evt_01J5Z7Q6W8',
    },
  },
};

const RECIPIENTS: Record<WebhookEventType, string> = {
  'order.confirmed':
    "Emitted once on an order's pending to confirmed transition; not re-emitted when a confirmed order is written again. Sent to organiser subscriptions only.",
  'event.published':
    "Emitted once, the first time an event becomes `public`. Sent to the organiser's subscriptions, and to those of every venue at whose address the event takes place (`principal` is then that venue).",
};

const header = (description: string, schema: Json, required = true): Json => ({
  name: '',
  in: 'header',
  required,
  description,
  schema,
});

function deliveryHeaders(type: WebhookEventType): Json[] {
  const named = (name: string, value: Json): Json => ({ ...value, name });
  return [
    named(
      'Service-Signature',
      header(
        '`t=<unix seconds>,v1=<hex>`: `v1` is HMAC-SHA256 keyed with the subscription `secret` (the whole `whsec_…` string) over `<t>.<raw body>`. During a secret rotation one `v1=` per active secret, newest first. Compare in constant time; reject a `t` more than 300 seconds from your clock.',
        { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
      ),
    ),
    named('Service-Event', header('The event type.', { type: 'string', enum: [type] })),
    named(
      'Service-Delivery',
      header(
        'The delivery id; equals the envelope `id`, which the signature covers: deduplicate on that, since this header is not signed.',
        { type: 'string', format: 'uuid' },
      ),
    ),
    named('User-Agent', header('Constant.', { type: 'string', enum: ['Service-Webhooks/1.0'] })),
    named('webhook-id', header('Standard Webhooks: the delivery id (same as `Service-Delivery`).', { type: 'string' })),
    named(
      'webhook-timestamp',
      header('Standard Webhooks: the same Unix seconds as `t` in `Service-Signature`.', {
        type: 'string',
        pattern: '^\\d+$',
      }),
    ),
    named(
      'webhook-signature',
      header(
        'Standard Webhooks: `v1,<base64 HMAC-SHA256>` per active secret, separated by spaces, over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed as the Standard Webhooks libraries derive it from the secret. Verify with any Standard Webhooks library instead of `Service-Signature` if you prefer.',
        { type: 'string' },
      ),
    ),
    named('traceparent', header('W3C Trace Context of the delivery attempt.', { type: 'string' })),
  ];
}

/** Schemas the deliveries refer to, by their names in `components.schemas`. */
export function webhookDeliverySchemas(): Record<string, Json> {
  const schemas: Record<string, Json> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    const data = DATA_SCHEMAS[type];
    schemas[data.name] = data.schema;
    schemas[`${data.name.replace(/Data$/, '')}Delivery`] = {
      type: 'object',
      description:
        'Webhook delivery envelope. Members are written in this order and the bytes never change across retries.',
      required: ['id', 'type', 'createdAt', 'principal', 'data'],
      properties: {
        id: { type: 'string', format: 'uuid', description: 'Delivery id; same as the `Service-Delivery` header.' },
        type: { type: 'string', enum: [type] },
        createdAt: dateTime,
        principal: {
          type: 'object',
          description: 'Who the delivery is for: an organiser, or the venue where the event happens.',
          required: ['type', 'id'],
          properties: {
            type: {
              type: 'string',
              enum: Object.entries<readonly WebhookEventType[]>(EVENT_TYPES_FOR_PRINCIPAL)
                .filter(([, types]) => types.includes(type))
                .map(([subscriber]) => subscriber),
            },
            id: { type: 'string' },
          },
        },
        data: { $ref: `#/components/schemas/${data.name}` },
      },
    };
  }
  return schemas;
}

/** The `webhooks` section: one POST per event type. */
export function webhookDeliveries(): Record<string, Json> {
  const webhooks: Record<string, Json> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    const envelope = `${DATA_SCHEMAS[type].name.replace(/Data$/, '')}Delivery`;
    webhooks[type] = {
      post: {
        operationId: `deliver_${type.replace('.', '_')}`,
        summary: `\`${type}\` delivery`,
        description: `${RECIPIENTS[type]} Delivery is at least once: deduplicate on \`Service-Delivery\`. Verify the signature over the raw body before parsing it (tolerance ${DEFAULT_SIGNATURE_TOLERANCE_SECONDS} s).`,
        tags: ['Webhook deliveries'],
        parameters: deliveryHeaders(type),
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { $ref: `#/components/schemas/${envelope}` }, example: EXAMPLES[type] },
          },
        },
        responses: {
          '2XX': {
            description:
              'Any 2xx within 10 seconds acknowledges the delivery. The response body is ignored (at most 4 KiB is read).',
          },
          default: {
            description: `Anything else, a redirect, or no answer within 10 seconds is a failure, retried with exponential backoff (a \`Retry-After\` on 429 or 503 sets the next wait). ${FAILURES_BEFORE_DISABLE} consecutive failures disable the subscription.`,
          },
        },
      },
    };
  }
  return webhooks;
}

/** Webhooks' part of the public document: its tags, and the deliveries with their schemas. */
export function webhooksOpenApiFragment(): OpenApiFragment {
  return {
    tags: [
      { name: 'Webhooks', description: 'Subscriptions to signed deliveries.' },
      { name: 'Webhook deliveries', description: 'What the service sends to a subscription.' },
    ],
    schemas: webhookDeliverySchemas(),
    webhooks: webhookDeliveries(),
  };
}
