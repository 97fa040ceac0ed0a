import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptOutcome } from '../webhooks/webhook-event-types';

/**
 * The service's Prometheus metrics, in one registry of our own (not
 * prom-client's global one, so a library that registers there cannot clash).
 * The objects live for the process: they are recorded from a Fastify hook
 * that exists before Nest does and from the delivery worker, and read by
 * `GET /internal/metrics`.
 *
 * Every label takes values from a fixed, small set (route patterns, status
 * codes, outcome classes), never from anything a caller can vary freely:
 * the number of series must not grow with traffic.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

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

const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Recorded webhook delivery attempts, by outcome (success, http_3xx/4xx/5xx, timeout, network_error, blocked_host).',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

// Series that exist from the start at 0, so rates and alerts have a baseline before the first event.
for (const reason of ['account', 'client']) rateLimitRefusals.inc({ reason }, 0);
for (const outcome of ['success', 'http_4xx', 'http_5xx', 'timeout', 'network_error'])
  webhookDeliveries.inc({ outcome }, 0);

/** Filled at scrape time from the outbox and the subscriptions table (see DatabaseMetricsCollector). */
export const webhookGauges = {
  lagSeconds: new Gauge({
    name: 'webhook_delivery_lag_seconds',
    help: 'Age in seconds of the oldest pending delivery that is due now (0 when none is due).',
    registers: [metricsRegistry],
  }),
  pending: new Gauge({
    name: 'webhook_pending_deliveries',
    help: 'Deliveries waiting to be sent (due now or scheduled for a retry).',
    registers: [metricsRegistry],
  }),
  disabledSubscriptions: new Gauge({
    name: 'webhook_disabled_subscriptions',
    help: 'Live webhook subscriptions disabled after consecutive failures.',
    registers: [metricsRegistry],
  }),
};

/** Filled at scrape time from the readiness checks, so an alert needs no separate prober. */
export const readinessGauges = {
  ready: new Gauge({
    name: 'service_ready',
    help: '1 when /readyz would answer 200, else 0.',
    registers: [metricsRegistry],
  }),
  check: new Gauge({
    name: 'service_readiness_check',
    help: 'Each readiness check: 1 up, 0 down.',
    labelNames: ['check'] as const,
    registers: [metricsRegistry],
  }),
};

/** Filled at scrape time from pg's pool (see DatabaseMetricsCollector). */
export const databasePoolGauges = {
  total: new Gauge({
    name: 'db_pool_connections',
    help: 'Connections the database pool holds (idle and in use).',
    registers: [metricsRegistry],
  }),
  idle: new Gauge({
    name: 'db_pool_idle_connections',
    help: 'Idle connections in the database pool.',
    registers: [metricsRegistry],
  }),
  waiting: new Gauge({
    name: 'db_pool_waiting_requests',
    help: 'Queries waiting for a free connection from the database pool.',
    registers: [metricsRegistry],
  }),
  max: new Gauge({
    name: 'db_pool_max_connections',
    help: 'The most connections the database pool opens.',
    registers: [metricsRegistry],
  }),
};

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

/** A bounded label for an attempt's outcome: an HTTP status is reduced to its class. */
export function deliveryOutcomeLabel(outcome: AttemptOutcome): string {
  if (typeof outcome !== 'number') return outcome;
  return outcome >= 200 && outcome <= 299 ? 'success' : `http_${Math.floor(outcome / 100)}xx`;
}

export function countDeliveryAttempt(outcome: AttemptOutcome): void {
  webhookDeliveries.inc({ outcome: deliveryOutcomeLabel(outcome) });
}

/** The live instances on this database, from the instance registry (set at each heartbeat and scrape). */
export const serviceInstancesGauge = new Gauge({
  name: 'service_instances',
  help: 'Instances of the service that heartbeat on this database (an instance three heartbeats late is not counted).',
  registers: [metricsRegistry],
});

/** The account budget's store (RATE_LIMIT_STORE=database) could not be reached. */
export const rateLimitStoreGauges = {
  fallbacks: new Counter({
    name: 'rate_limit_store_fallbacks_total',
    help: 'Times this instance could not reach the shared account budget and fell back to its local share (the limit divided by the live instances).',
    registers: [metricsRegistry],
  }),
  fallback: new Gauge({
    name: 'rate_limit_store_fallback',
    help: '1 while this instance counts account budgets locally because the shared counter is unreachable, else 0.',
    registers: [metricsRegistry],
  }),
};
rateLimitStoreGauges.fallback.set(0);
