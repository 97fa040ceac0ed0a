/** Contract strings (api-v1.md "WebhookEventType"), kept exactly as written. */
export const WEBHOOK_EVENT_TYPES = ['order.confirmed', 'event.published'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The webhook types each principal type may subscribe to (api-v1.md
 * "Authentication" 9: a venue key may subscribe to `event.published` only;
 * professional keys hold no subscriptions). `GET /v1`'s `events_available`
 * and the subscription rules both read this one table.
 */
export const EVENT_TYPES_FOR_PRINCIPAL = {
  organiser: WEBHOOK_EVENT_TYPES,
  venue: ['event.published'],
  professional: [],
} as const satisfies Record<'organiser' | 'venue' | 'professional', readonly WebhookEventType[]>;

/**
 * The subscription limit of an account (api-v1.md "Limits"). In libs rather
 * than in the webhooks context, so that the OpenAPI description of
 * `limit_reached` (src/common, a lower layer) names the number the context
 * enforces.
 */
export const MAX_SUBSCRIPTIONS_PER_ACCOUNT = 10;
