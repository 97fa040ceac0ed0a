import { retryAfterDelayMs, retryDelayMs } from '../../../libs/webhooks';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';
import type { AttemptOutcome } from '../webhook-event-types';

export interface RetrySchedule {
  baseMs: number;
  maxMs: number;
  maxAttempts: number;
}

export interface AttemptPlan {
  succeeded: boolean;
  status: DeliveryStatus;
  /** Wait before the next attempt when the delivery stays pending. */
  retryInMs: number | null;
}

export function isAcknowledged(outcome: AttemptOutcome): boolean {
  return typeof outcome === 'number' && outcome >= 200 && outcome <= 299;
}

/**
 * What becomes of a delivery after one attempt. Any 2xx acknowledges. A host
 * that resolves to a refused address is dropped: retrying cannot make it
 * allowed, and every retry would be one more probe of the network. Other
 * failures retry on the backoff schedule until `maxAttempts`, except that a
 * 429 or 503 with Retry-After may lengthen the wait, up to the schedule's
 * longest: a receiver can ask for more time, never for the schedule to run
 * faster. Were a short Retry-After (a maintenance page's 60 s) taken as the
 * wait, every attempt would follow it, a delivery's three days of retries
 * would end in two hours, and a receiver that politely said when to come
 * back would be disabled first.
 */
export function planAfterAttempt(input: {
  attemptsBefore: number;
  outcome: AttemptOutcome;
  retryAfter: string | undefined;
  now: Date;
  schedule: RetrySchedule;
  random?: () => number;
}): AttemptPlan {
  const { outcome, schedule } = input;
  if (isAcknowledged(outcome)) return { succeeded: true, status: 'succeeded', retryInMs: null };
  if (outcome === 'blocked_host') return { succeeded: false, status: 'dropped', retryInMs: null };
  const attempt = input.attemptsBefore + 1;
  if (attempt >= schedule.maxAttempts) return { succeeded: false, status: 'failed', retryInMs: null };
  const scheduled = retryDelayMs(attempt, { baseMs: schedule.baseMs, maxMs: schedule.maxMs }, input.random);
  const asked =
    outcome === 429 || outcome === 503
      ? retryAfterDelayMs(input.retryAfter, input.now, { minMs: schedule.baseMs, maxMs: schedule.maxMs })
      : null;
  return { succeeded: false, status: 'pending', retryInMs: asked === null ? scheduled : Math.max(asked, scheduled) };
}

/**
 * A resend is one attempt: it ends the delivery whatever happens (succeeded,
 * dropped for a refused host, failed otherwise) and never starts a retry
 * schedule; the operator decides whether to try again.
 */
export function planManualAttempt(outcome: AttemptOutcome): AttemptPlan {
  if (isAcknowledged(outcome)) return { succeeded: true, status: 'succeeded', retryInMs: null };
  return { succeeded: false, status: outcome === 'blocked_host' ? 'dropped' : 'failed', retryInMs: null };
}
