import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '../../common/metrics/metrics-registry';
import type { AttemptOutcome } from '../webhook-event-types';

const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Recorded webhook delivery attempts, by outcome (success, http_3xx/4xx/5xx, http_other, timeout, network_error, blocked_host).',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

/** Every outcome an attempt is counted under (deliveryOutcomeLabel). */
export const DELIVERY_OUTCOMES = [
  'success',
  'http_3xx',
  'http_4xx',
  'http_5xx',
  // A final status outside 200 to 599 (a 1xx the receiver ended on, or 600 to 999): rare, in one series.
  'http_other',
  'timeout',
  'network_error',
  'blocked_host',
] as const;

// Series that exist from the start at 0, so rates and alerts have a baseline before the first attempt.
for (const outcome of DELIVERY_OUTCOMES) webhookDeliveries.inc({ outcome }, 0);

/**
 * How long each claim statement took, from sending it to its rows: what a
 * database under pressure (a held xmin horizon, a long backlog) shows first.
 */
const webhookClaimDuration = new Histogram({
  name: 'webhook_claim_duration_seconds',
  help: 'Time the delivery worker waited for one claim of due deliveries (the statement and its round trip).',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

export function recordClaimDuration(seconds: number): void {
  webhookClaimDuration.observe(seconds);
}

/** A bounded label for an attempt's outcome, one of DELIVERY_OUTCOMES: an HTTP status is reduced to its class. */
export function deliveryOutcomeLabel(outcome: AttemptOutcome): (typeof DELIVERY_OUTCOMES)[number] {
  if (typeof outcome !== 'number') return outcome;
  if (outcome >= 200 && outcome <= 299) return 'success';
  if (outcome >= 300 && outcome <= 599) return `http_${Math.floor(outcome / 100) as 3 | 4 | 5}xx`;
  return 'http_other';
}

export function countDeliveryAttempt(outcome: AttemptOutcome): void {
  webhookDeliveries.inc({ outcome: deliveryOutcomeLabel(outcome) });
}
