import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '../common/metrics/metrics-registry';

/**
 * The gauges filled at scrape time, in the service's one registry. The
 * counters are recorded where things happen, in the layer they happen in
 * (`src/common/http/http-metrics.ts`, `src/common/rate-limit/rate-limit-metrics.ts`,
 * `src/webhooks/delivery/delivery-metrics.ts`), so no layer below this one
 * imports it.
 */
export { metricsRegistry };

/** Filled at scrape time from Webhooks' figures (see DatabaseMetricsCollector). */
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
  queueDeadRows: new Gauge({
    name: 'webhook_queue_dead_rows',
    help: 'Dead row versions in the delivery queue table not yet vacuumed (pg_stat_user_tables.n_dead_tup).',
    registers: [metricsRegistry],
  }),
};

/** Filled at scrape time from pg_stat_activity (see DatabaseMetricsCollector). */
export const transactionHorizonGauges = {
  oldestTransactionSeconds: new Gauge({
    name: 'db_oldest_transaction_seconds',
    help: 'Age in seconds of the oldest open transaction holding the xmin horizon back in this database (0 when none).',
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

/** Filled at scrape time from the instance registry (src/database/instances/). */
export const serviceInstancesGauge = new Gauge({
  name: 'service_instances',
  help: 'Instances of the service that heartbeat on this database (an instance three heartbeats late is not counted).',
  registers: [metricsRegistry],
});

/**
 * Filled at scrape time from ScheduledJobs' tally (src/database sits below the
 * registry), labelled by `task`, the job's name. Summed over the instances it
 * grows by one per job per period.
 */
export const scheduledJobRunsCounter = new Counter({
  name: 'scheduled_job_runs_total',
  help: 'Runs of each scheduled job this instance started (0 where its role runs no jobs); summed over the instances, one per period.',
  // Not `job`: Prometheus sets `job` (and `instance`) on every series it scrapes and would rename this one.
  labelNames: ['task'] as const,
  registers: [metricsRegistry],
});
