import type { WebhookAttemptDto, WebhookDeliveryResponseDto } from '../webhooks/dto/webhook.dto';

/** The receiver's answer is shown up to this many bytes (internal-api.md, "Webhook portal"). */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface PortalAttemptView {
  at: string;
  trigger: 'scheduled' | 'manual';
  outcome: string;
  /** Null when the receiver never answered (timeout, network error) or the log does not say. */
  httpStatus: number | null;
  durationMs: number;
  /** At most 1 KiB of the receiver's body; null when not recorded. */
  responseExcerpt: string | null;
}

export interface PortalDeliveryView {
  id: string;
  type: string;
  status: string;
  createdAt: string;
  nextAttemptAt: string | null;
  attempts: PortalAttemptView[];
}

/** The first `bytes` bytes of a text, never cutting a character in two. */
export function excerptOf(text: string, bytes = RESPONSE_EXCERPT_BYTES): string {
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  // A cut inside a multi-byte character decodes to U+FFFD at the end: drop it.
  return encoded
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}

/**
 * The receiver's HTTP status and the start of its response body are recorded
 * for every attempt since they were; an older attempt has neither, and its
 * outcome of digits still says the status it got.
 */
export function attemptView(attempt: WebhookAttemptDto): PortalAttemptView {
  const outcome = String(attempt.outcome);
  const recorded = attempt.httpStatus;
  // An outcome of digits is the status the receiver answered; the other outcomes had no answer.
  const httpStatus = typeof recorded === 'number' ? recorded : /^\d{3}$/.test(outcome) ? Number(outcome) : null;
  const body = attempt.responseExcerpt;
  return {
    at: attempt.at,
    trigger: attempt.trigger,
    outcome,
    httpStatus,
    durationMs: attempt.durationMs,
    responseExcerpt: typeof body === 'string' ? excerptOf(body) : null,
  };
}

export function deliveryView(delivery: WebhookDeliveryResponseDto): PortalDeliveryView {
  return {
    id: delivery.id,
    type: delivery.type,
    status: delivery.status,
    createdAt: delivery.createdAt,
    nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt : null,
    attempts: delivery.attemptLog.map((attempt) => attemptView(attempt)),
  };
}
