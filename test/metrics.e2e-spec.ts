import assert from 'node:assert/strict';
import { DELIVERY_OUTCOMES } from '../src/webhooks/delivery/delivery-metrics';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../src/common/auth-context/access';
import { databaseClient } from './support/database-client';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { startTestService, type TestService } from './support/test-service';
import { withApp } from './support/with-app';
import { roomInRateWindow } from './support/rate-window';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the text exposition format strictly: every line is a comment, blank, or a well-formed sample. */
function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const [, name = '', labelText = '', raw = ''] = match;
    for (const [, label = '', labelValue = ''] of labelText.matchAll(LABEL)) labels[label] = labelValue;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    // prom-client writes NaN as `Nan`; Prometheus parses floats case-insensitively (Go's ParseFloat).
    assert.ok(/^nan$/i.test(raw) || !Number.isNaN(value), `not a number: ${line}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

const SCOPES: Scope[] = ['events:read', 'events:write', 'webhooks:read', 'webhooks:write'];

describe('GET /internal/metrics', () => {
  let service: TestService;
  let organiser: Organiser;
  let receiver: HttpsReceiver;

  const scrape = async (): Promise<Sample[]> => {
    const answer = await internalApi(service)('GET', '/internal/metrics');
    assert.equal(answer.status, 200, answer.text);
    return parsePrometheusText(answer.text);
  };
  const valueOf = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
    samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

  before(async () => {
    receiver = await startHttpsReceiver();
    service = await startTestService({
      WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
      WEBHOOK_POLL_MS: '50',
      // The per-client failure budget (where configured) would refuse the unknown paths of the cardinality test.
      RATE_LIMIT_FAILURES_PER_CLIENT: '0',
      RATE_LIMIT_READS: '100000',
    });
    organiser = await fixtures(service).organiser({ scopes: SCOPES });
  });
  after(async () => {
    await service.close();
    await receiver.close();
  });

  it('answers Prometheus text (not the JSON envelope) with the admin token, carrying every series the contract names', async () => {
    await publicApi(service)('GET', '/v1/events', { key: organiser.key });
    const answer = await internalApi(service)('GET', '/internal/metrics');
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.ok(!answer.text.trimStart().startsWith('{'), 'no JSON envelope');
    const samples = parsePrometheusText(answer.text);
    const names = new Set(samples.map((s) => s.name));
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'http_request_duration_seconds_sum',
      'http_request_duration_seconds_count',
      'rate_limit_refusals_total',
      'webhook_deliveries_total',
      'webhook_delivery_lag_seconds',
      'webhook_pending_deliveries',
      'webhook_disabled_subscriptions',
      'db_pool_connections',
      'db_pool_idle_connections',
      'db_pool_waiting_requests',
      'db_pool_max_connections',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'service_ready',
      'service_readiness_check',
    ]) {
      assert.ok(names.has(name), `${name} is exposed`);
    }
    assert.match(answer.text, /# TYPE http_request_duration_seconds histogram/);
    assert.equal(valueOf(samples, 'db_pool_max_connections'), 20);
  });

  it('counts and logs a URL the router refuses (malformed, an overlong segment) as every answer is, once each', async () => {
    const count = async (status: string) =>
      (await scrape())
        .filter((sample) => sample.name === 'http_requests_total' && sample.labels['status'] === status)
        .reduce((sum, sample) => sum + sample.value, 0);
    const before = { long: await count('414'), malformed: await count('400') };
    const long = await publicApi(service)('GET', `/v1/events/${'a'.repeat(5000)}`, { key: organiser.key });
    assert.equal(long.status, 414);
    assert.equal(long.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(await count('414'), before.long + 1);
    assert.equal((await publicApi(service)('GET', '/v1/events/%E0%A4%A', { key: organiser.key })).status, 400);
    assert.equal(await count('400'), before.malformed + 1);
  });

  it('uses no label Prometheus gives every series it scrapes (job, instance), which it would rename to exported_*', async () => {
    const samples = await scrape();
    assert.ok(
      samples.some((sample) => sample.name === 'scheduled_job_runs_total'),
      'the scheduled jobs are counted',
    );
    const clashing = samples.filter((sample) => 'job' in sample.labels || 'instance' in sample.labels);
    assert.deepEqual([...new Set(clashing.map((sample) => sample.name))], []);
  });

  it('answers on the metrics_path of the scrape config docs/operations.md gives', async () => {
    const operations = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const path = /^\s+metrics_path: (\S+)$/m.exec(operations)?.[1];
    assert.ok(path !== undefined, 'the scrape config names its metrics_path (Prometheus would scrape /metrics)');
    const answer = await internalApi(service)('GET', path);
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /^# HELP /m);
  });

  // Their value 0 before the first attempt is checked in a process of its own (delivery-metrics.spec.ts): the
  // registry is the process's, shared with the other services a batch of test files starts.
  it('exposes a webhook_deliveries_total series for every outcome from the start, so every rate has a baseline', async () => {
    const outcomes = (await scrape())
      .filter((sample) => sample.name === 'webhook_deliveries_total')
      .map((sample) => sample.labels['outcome'])
      .sort();
    assert.deepEqual(outcomes, [...DELIVERY_OUTCOMES].sort());
  });

  it('metrics need the admin token and never answer on the public listener', async () => {
    assert.equal((await internalApi(service)('GET', '/internal/metrics', { token: null })).status, 401);
    assert.equal((await internalApi(service)('GET', '/internal/metrics', { token: 'x'.repeat(32) })).status, 401);
    assert.equal((await publicApi(service)('GET', '/internal/metrics')).status, 404);
  });

  it('requests are labelled by method, route pattern and status, never the raw path', async () => {
    const id = `evt_${randomBytes(12).toString('hex')}`;
    const missing = await publicApi(service)('GET', `/v1/events/${id}`, { key: organiser.key });
    assert.equal(missing.status, 404);
    await publicApi(service)('GET', `/no-such-path-${id}`);
    const samples = await scrape();
    assert.ok(
      (valueOf(samples, 'http_requests_total', { method: 'GET', route: '/v1/events/:eventId', status: '404' }) ?? 0) >=
        1,
    );
    assert.ok((valueOf(samples, 'http_requests_total', { route: 'unmatched', status: '404' }) ?? 0) >= 1);
    assert.ok(
      (valueOf(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/v1/events' }) ?? 0) >= 1,
    );
    assert.ok(!samples.some((s) => Object.values(s.labels).some((value) => value.includes(id))));
  });

  it('cardinality is bounded: 1,000 distinct ids and 1,000 unknown paths add no series', async () => {
    const api = publicApi(service);
    const send = async (index: number): Promise<void> => {
      const id = `evt_${randomBytes(12).toString('hex')}`;
      await api('GET', `/v1/events/${id}`, { key: organiser.key, headers: { 'x-request-id': `card-${index}` } });
      await api('GET', `/unknown/${index}/${randomBytes(4).toString('hex')}?q=${index}`);
    };
    await send(-1);
    const seriesCount = (samples: Sample[]): number =>
      samples.filter((s) => !s.name.startsWith('process_') && !s.name.startsWith('nodejs_')).length;
    const before = seriesCount(await scrape());
    for (let batch = 0; batch < 1_000; batch += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, offset) => send(batch + offset)));
    }
    const afterSamples = await scrape();
    assert.equal(seriesCount(afterSamples), before);
    assert.ok(
      (valueOf(afterSamples, 'http_requests_total', { method: 'GET', route: '/v1/events/:eventId', status: '404' }) ??
        0) >= 1_001,
    );
    assert.ok(
      (valueOf(afterSamples, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) ?? 0) >=
        1_001,
    );
  });

  it('webhook deliveries are counted by outcome class; pending, lag and disabled subscriptions are read from the database', async () => {
    const before = valueOf(await scrape(), 'webhook_deliveries_total', { outcome: 'success' }) ?? 0;
    const api = publicApi(service);
    const admin = internalApi(service);
    const hook = await api('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: `${receiver.origin}/hooks`, events: ['event.published'] },
    });
    assert.equal(hook.status, 201, hook.text);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: organiser.id, title: { EN: 'Metrics' }, startTime: '2030-01-01T10:00:00Z' },
    });
    assert.equal(event.status, 201, event.text);
    assert.equal((await admin('POST', `/internal/events/${event.body.data.id}/publish`)).status, 200);
    await receiver.waitFor((requests) => requests.length >= 1);
    const deadline = Date.now() + 10_000;
    while ((valueOf(await scrape(), 'webhook_deliveries_total', { outcome: 'success' }) ?? 0) < before + 1) {
      assert.ok(Date.now() < deadline, 'the attempt is counted');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const db = await databaseClient(service.databaseUrl);
    try {
      // A delivery due ten minutes ago, held by another instance's lease: the oldest due pending delivery.
      await db.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at,
                                       lease_expires_at, lease_token)
         VALUES ('dlv_metrics_lag', $1, 'event.published', 'evt_lag', '\\x7b7d', now() - interval '600 seconds',
                 now() + interval '1 hour', 'another-instance')`,
        [hook.body.data.id],
      );
      let samples = await scrape();
      const lag = valueOf(samples, 'webhook_delivery_lag_seconds') ?? 0;
      assert.ok(lag >= 600 && lag < 700, `lag ${lag}`);
      assert.equal(valueOf(samples, 'webhook_pending_deliveries'), 1);
      assert.equal(valueOf(samples, 'webhook_disabled_subscriptions'), 0);

      await db.query(`UPDATE webhook_subscription SET enabled = false WHERE id = $1`, [hook.body.data.id]);
      samples = await scrape();
      assert.equal(valueOf(samples, 'webhook_disabled_subscriptions'), 1);
      assert.equal(valueOf(samples, 'webhook_delivery_lag_seconds'), 0, 'a disabled subscription is not lag');
    } finally {
      await db.end();
    }
  });

  it('lag leaves out deliveries waiting behind a failing endpoint’s probe: only its oldest pending delivery counts', async () => {
    const hook = await publicApi(service)('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: `${receiver.origin}/failing`, events: ['event.published'] },
    });
    assert.equal(hook.status, 201, hook.text);
    const db = await databaseClient(service.databaseUrl);
    try {
      await db.query(`DELETE FROM webhook_delivery WHERE id = 'dlv_metrics_lag'`);
      await db.query(`UPDATE webhook_subscription SET consecutive_failures = 3 WHERE id = $1`, [hook.body.data.id]);
      // The oldest waits for its backoff (an hour from now); the one behind it has been "due" for ten minutes.
      await db.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
         VALUES ('dlv_probe', $1, 'event.published', 'evt_probe', '\\x7b7d', now() + interval '1 hour'),
                ('dlv_behind', $1, 'event.published', 'evt_behind', '\\x7b7d', now() - interval '600 seconds')`,
        [hook.body.data.id],
      );
      const samples = await scrape();
      assert.equal(valueOf(samples, 'webhook_delivery_lag_seconds'), 0);
      assert.equal(valueOf(samples, 'webhook_pending_deliveries'), 2);
      // Once the probe is due, it is what lags.
      await db.query(`UPDATE webhook_delivery SET next_attempt_at = now() - interval '120 seconds',
                             lease_expires_at = now() + interval '1 hour', lease_token = 'elsewhere'
                       WHERE id = 'dlv_probe'`);
      const lag = valueOf(await scrape(), 'webhook_delivery_lag_seconds') ?? 0;
      assert.ok(lag >= 120 && lag < 200, `lag ${lag}`);
    } finally {
      await db.end();
    }
  });

  it('times every claim of due deliveries in webhook_claim_duration_seconds', async () => {
    const claimsBefore = valueOf(await scrape(), 'webhook_claim_duration_seconds_count') ?? 0;
    const hook = await publicApi(service)('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: `${receiver.origin}/claims`, events: ['event.published'] },
    });
    assert.equal(hook.status, 201, hook.text);
    const admin = internalApi(service);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: organiser.id, title: { EN: 'Claimed' }, startTime: '2030-01-01T10:00:00Z' },
    });
    assert.equal(event.status, 201, event.text);
    assert.equal((await admin('POST', `/internal/events/${event.body.data.id}/publish`)).status, 200);
    await receiver.waitFor((requests) => requests.some((request) => request.path === '/claims'));
    const samples = await scrape();
    const claims = valueOf(samples, 'webhook_claim_duration_seconds_count') ?? 0;
    assert.ok(claims > claimsBefore, `claims timed: ${claimsBefore} before, ${claims} after a delivery`);
    const seconds = valueOf(samples, 'webhook_claim_duration_seconds_sum') ?? Number.NaN;
    assert.ok(seconds > 0 && seconds < claims * 10, `claim time in all: ${seconds} s over ${claims} claims`);
    assert.equal(valueOf(samples, 'webhook_claim_duration_seconds_bucket', { le: '+Inf' }), claims);
  });

  it('reports the age of the oldest transaction holding the xmin horizon, and the dead rows of the delivery queue', async () => {
    const holder = await databaseClient(service.databaseUrl);
    const writer = await databaseClient(service.databaseUrl);
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT 1'); // takes the snapshot that holds the horizon
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const held = valueOf(await scrape(), 'db_oldest_transaction_seconds') ?? Number.NaN;
      assert.ok(held >= 1.2 && held < 60, `oldest transaction ${held} s`);

      // Rows the queue deletes while the horizon is held stay dead: vacuum may not remove them.
      const subscriptionId = (
        await writer.query<{ id: string }>(`SELECT id FROM webhook_subscription ORDER BY created_at LIMIT 1`)
      ).rows[0]?.id;
      assert.ok(subscriptionId);
      await writer.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
         SELECT 'dlv_dead_' || n, $1, 'event.published', 'evt_dead_' || n, '\\x7b7d', now() + interval '1 hour'
           FROM generate_series(1, 50) AS n`,
        [subscriptionId],
      );
      await writer.query(`DELETE FROM webhook_delivery WHERE id LIKE 'dlv_dead_%'`);
      await writer.query('SELECT pg_stat_force_next_flush()');
      await writer.query('SELECT 1');
      await writer.query(`VACUUM webhook_delivery`);
      const dead = valueOf(await scrape(), 'webhook_queue_dead_rows') ?? Number.NaN;
      assert.ok(dead >= 50, `queue dead rows ${dead}`);

      await holder.query('COMMIT');
      const after = valueOf(await scrape(), 'db_oldest_transaction_seconds') ?? Number.NaN;
      assert.ok(after < held, `after the commit: ${after} s`);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await writer.end();
    }
  });

  it('reports the oldest transaction’s age even when the webhook figures cannot be read in time: only those are unknown', async () => {
    const locker = await databaseClient(service.databaseUrl);
    try {
      // A transaction that keeps the queue's turns from being read: the webhook figures wait, and time out.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE webhook_delivery_turn IN ACCESS EXCLUSIVE MODE');
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const samples = await scrape();
      assert.ok(Number.isNaN(valueOf(samples, 'webhook_delivery_lag_seconds')), 'lag unknown, not 0');
      const oldest = valueOf(samples, 'db_oldest_transaction_seconds') ?? Number.NaN;
      assert.ok(oldest >= 1.2 && oldest < 60, `oldest transaction ${oldest} s`);
      assert.ok(!Number.isNaN(valueOf(samples, 'webhook_queue_dead_rows') ?? Number.NaN), 'dead rows still read');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('answers the scrape in time while the instance registry cannot be read: service_instances is NaN, the rest still read', async () => {
    const locker = await databaseClient(service.databaseUrl);
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE service_instance IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const samples = await scrape();
      const took = Date.now() - started;
      assert.ok(took < 5_000, `the scrape took ${took} ms`);
      assert.ok(Number.isNaN(valueOf(samples, 'service_instances') ?? 0), 'instances unknown, not a count');
      assert.ok(!Number.isNaN(valueOf(samples, 'webhook_queue_dead_rows') ?? Number.NaN), 'other figures still read');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('the scrape still answers while the database refuses connections: readiness 0 naming database, webhook gauges and service_instances NaN, process metrics present', async () => {
    const databaseName = new URL(service.databaseUrl).pathname.slice(1);
    const admin = await databaseClient(process.env['TEST_PG_ADMIN_URL'] ?? '');
    try {
      await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [databaseName]);
      try {
        const samples = await scrape();
        assert.equal(valueOf(samples, 'service_ready'), 0);
        assert.equal(valueOf(samples, 'service_readiness_check', { check: 'database' }), 0);
        assert.equal(valueOf(samples, 'service_readiness_check', { check: 'deliveryWorker' }), 1);
        assert.ok(Number.isNaN(valueOf(samples, 'webhook_delivery_lag_seconds')), 'lag unknown, not 0');
        assert.ok(Number.isNaN(valueOf(samples, 'service_instances')), 'instances unknown, not the last count');
        assert.ok((valueOf(samples, 'process_cpu_seconds_total') ?? 0) > 0);
      } finally {
        await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS true`);
      }
    } finally {
      await admin.end();
    }
  });
});

describe('rate_limit_refusals_total', () => {
  let service: TestService;

  const app = withApp({ RATE_LIMIT_READS: '2' });
  before(async () => {
    await roomInRateWindow();
    ({ service } = app);
  });

  it('rate-limit refusals are counted with reason account when the account budget refuses', async () => {
    const scrape = async (): Promise<Sample[]> =>
      parsePrometheusText((await internalApi(service)('GET', '/internal/metrics')).text);
    const count = (samples: Sample[]): number =>
      samples.find((s) => s.name === 'rate_limit_refusals_total' && s.labels['reason'] === 'account')?.value ?? 0;
    const before = count(await scrape());
    const organiser = await fixtures(service).organiser({ scopes: ['events:read'] });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push((await publicApi(service)('GET', '/v1/me', { key: organiser.key })).status);
    assert.deepEqual(statuses, [200, 200, 429, 429]);
    assert.equal(count(await scrape()), before + 2);
  });
});
