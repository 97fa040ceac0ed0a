import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '../metrics/metrics-registry';

/** Recorded from the conventions' response hook, which exists before Nest does. */
const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from receiving a request to sending its response, by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

const rateLimitRefusals = new Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused with 429, by which budget refused them (account: the per-account budget; client: any other).',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

// Series that exist from the start at 0, so rates and alerts have a baseline before the first event.
for (const reason of ['account', 'client']) rateLimitRefusals.inc({ reason }, 0);

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The route label of a request that matched no route (404s of unknown paths). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface AnsweredRequest {
  method: string;
  /** The matched route pattern (`/v1/events/:eventId`), or undefined when none matched. */
  routePattern: string | undefined;
  status: number;
  seconds: number;
  /** The per-account budget's headers were on the response (only meaningful for a 429). */
  accountBudget: boolean;
}

export function recordAnsweredRequest(answered: AnsweredRequest): void {
  const labels = {
    method: KNOWN_METHODS.has(answered.method) ? answered.method : 'other',
    route: answered.routePattern ?? UNMATCHED_ROUTE,
    status: String(answered.status),
  };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, answered.seconds);
  if (answered.status === 429) rateLimitRefusals.inc({ reason: answered.accountBudget ? 'account' : 'client' });
}
