import type { PrincipalType } from '../common/auth-context/access';

import {
  EVENT_TYPES_FOR_PRINCIPAL,
  MAX_SUBSCRIPTIONS_PER_ACCOUNT,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../libs/webhooks/event-types';

export { EVENT_TYPES_FOR_PRINCIPAL, MAX_SUBSCRIPTIONS_PER_ACCOUNT, WEBHOOK_EVENT_TYPES, type WebhookEventType };

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** Principals that may hold subscriptions. */
export type SubscriberType = Extract<PrincipalType, 'organiser' | 'venue'>;

/** `lastStatus`: an HTTP status, or why no status was received. */
export type AttemptOutcome = number | 'timeout' | 'network_error' | 'blocked_host';

/** What made an attempt: the worker's schedule, or an operator's resend. */
export type AttemptTrigger = 'scheduled' | 'manual';

/** Stored as text; an HTTP status comes back as a number. */
export function outcomeFromText(text: string | null): AttemptOutcome | null {
  if (text === null) return null;
  if (/^\d{3}$/.test(text)) return Number(text);
  return text as AttemptOutcome;
}

/** Consecutive failed attempts that disable a subscription (api-v1.md "Delivery guarantees" 4). */
export const FAILURES_BEFORE_DISABLE = 20;
/** Description is trimmed, then cut to this many characters. */
export const MAX_DESCRIPTION_LENGTH = 200;
