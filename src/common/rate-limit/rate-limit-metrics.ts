import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '../metrics/metrics-registry';

/** The shared account budget (RATE_LIMIT_STORE=database) out of reach: this instance counts its share locally. */
export const rateLimitStoreMetrics = {
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
// A series from the start, so an alert has a baseline before the first fallback.
rateLimitStoreMetrics.fallback.set(0);
