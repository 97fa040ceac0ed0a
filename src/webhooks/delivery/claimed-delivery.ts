import { sqlText } from '../../database/sql/sql-fragment';
import type { WebhookEventType } from '../webhook-event-types';

/** A delivery leased to this worker for one attempt. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  eventType: WebhookEventType;
  payload: Buffer;
  /** Attempts already made before this one. */
  attempts: number;
  /** Attempts made before the current retry schedule began. */
  retryFrom: number;
  traceId: string | null;
  url: string;
  secretSealed: string;
  /** The secret a rotation replaced, while its grace period lasts. */
  previousSecretSealed: string | null;
  leaseToken: string;
}

/**
 * What a claim (or a resend's lease) returns, with the subscription's url and
 * active secrets; `d` is the delivery, `s` its subscription.
 */
export const CLAIMED_COLUMNS =
  sqlText(`d.id, d.subscription_id, d.event_type, d.payload, d.attempts, d.retry_from, d.trace_id, s.url,
  s.secret_sealed,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_sealed END AS previous_secret_sealed`);

export interface ClaimedRow {
  id: string;
  subscription_id: string;
  event_type: WebhookEventType;
  payload: Buffer;
  attempts: number;
  retry_from: number;
  trace_id: string | null;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

export function claimedDelivery(row: ClaimedRow, leaseToken: string): ClaimedDelivery {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    eventType: row.event_type,
    payload: row.payload,
    attempts: row.attempts,
    retryFrom: row.retry_from,
    traceId: row.trace_id,
    url: row.url,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    leaseToken,
  };
}
