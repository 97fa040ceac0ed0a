import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { HealthCheckService } from '@nestjs/terminus';
import { Client } from 'pg';
import { ReadinessService } from '../src/health/readiness.service';
import { WebhookDeliveryWorker } from '../src/webhooks/delivery/webhook-delivery.worker';
import { databaseClient } from './support/database-client';
import { captureLog } from './support/captured-log';
import { type TestService } from './support/test-service';
import { withApp } from './support/with-app';
import { eventually } from './support/eventually';

interface Probe {
  status: number;
  headers: Headers;
  body: { status: string; checks?: Record<string, string> };
}

async function probe(base: string, path: string, init: RequestInit = {}): Promise<Probe> {
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Probe['body'] };
}

/**
 * Runs `work` while the service's database refuses connections, as a
 * stopped server does: its connections drop and new ones are refused.
 */
async function whileTheDatabaseRefuses(service: TestService, work: () => Promise<void>): Promise<void> {
  const databaseName = new URL(service.databaseUrl).pathname.slice(1);
  const admin = new Client({ connectionString: process.env['TEST_PG_ADMIN_URL'] });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [databaseName]);
    try {
      await work();
    } finally {
      await admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS true`);
    }
  } finally {
    await admin.end();
  }
}

/** The EventsApiNotReady runbook of docs/operations.md, on one line (compiled to dist/test/: the repository is two up). */
function notReadyRunbook(): string {
  const guide = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
  const start = guide.indexOf('- **EventsApiNotReady**');
  assert.ok(start >= 0, 'docs/operations.md has the EventsApiNotReady runbook');
  const end = guide.indexOf('\n- **', start + 1);
  return guide.slice(start, end === -1 ? undefined : end).replace(/\s+/g, ' ');
}

describe('/healthz and /readyz', () => {
  let service: TestService;
  const log = captureLog();
  const logLines = log.lines;

  const app = withApp({ LOG_LEVEL: 'info', RATE_LIMIT_READS: '5' }, { logTo: log.stream });
  before(() => {
    service = app.service;
  });

  it('healthz answers 200 {status: ok} on both listeners without a credential', async () => {
    for (const base of [service.publicUrl, service.adminUrl]) {
      const answer = await probe(base, '/healthz');
      assert.equal(answer.status, 200, base);
      assert.deepEqual(answer.body, { status: 'ok' });
      assert.equal(answer.headers.get('cache-control'), 'no-store');
    }
  });

  it('readyz answers 200 {status: ready} naming database, migrations and deliveryWorker as up, on both listeners', async () => {
    for (const base of [service.publicUrl, service.adminUrl]) {
      const answer = await probe(base, '/readyz');
      assert.equal(answer.status, 200, base);
      assert.deepEqual(answer.body, {
        status: 'ready',
        checks: { database: 'up', migrations: 'up', deliveryWorker: 'up' },
      });
    }
  });

  it('probes are never rate-limited: far more probes than the read budget all answer 200 without budget headers', async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, index) => probe(service.publicUrl, index % 2 === 0 ? '/healthz' : '/readyz')),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('x-ratelimit-limit'), null);
    }
  });

  it('probes ignore credentials: a wrong bearer token on either listener still gets 200', async () => {
    const headers = { authorization: 'Bearer svc_live_not_a_key' };
    assert.equal((await probe(service.publicUrl, '/healthz', { headers })).status, 200);
    assert.equal((await probe(service.adminUrl, '/readyz', { headers })).status, 200);
  });

  it('probes are never logged per request', async () => {
    await probe(service.publicUrl, '/healthz', { headers: { 'x-request-id': 'probe-log-check' } });
    await probe(service.publicUrl, '/readyz', { headers: { 'x-request-id': 'probe-log-check' } });
    await fetch(`${service.publicUrl}/v1`, { headers: { 'x-request-id': 'normal-log-check' } });
    assert.ok(
      logLines.some((line) => line['reqId'] === 'normal-log-check'),
      'other requests are logged',
    );
    assert.ok(!logLines.some((line) => line['reqId'] === 'probe-log-check'));
    assert.ok(!logLines.some((line) => line['url'] === '/healthz' || line['url'] === '/readyz'));
  });

  it('readyz answers 503 naming migrations as down while a migration of this build is not applied', async () => {
    const db = await databaseClient(service.databaseUrl);
    try {
      const [row] = (await db.query(`SELECT id, timestamp, name FROM schema_migration ORDER BY id DESC LIMIT 1`))
        .rows as Array<{ id: number; timestamp: string; name: string }>;
      assert.ok(row);
      await db.query(`DELETE FROM schema_migration WHERE id = $1`, [row.id]);
      try {
        const answer = await probe(service.publicUrl, '/readyz');
        assert.equal(answer.status, 503);
        assert.deepEqual(answer.body, {
          status: 'not_ready',
          checks: { database: 'up', migrations: 'down', deliveryWorker: 'up' },
        });
      } finally {
        await db.query(`INSERT INTO schema_migration (id, timestamp, name) VALUES ($1, $2, $3)`, [
          row.id,
          row.timestamp,
          row.name,
        ]);
      }
      assert.equal((await probe(service.publicUrl, '/readyz')).status, 200);
    } finally {
      await db.end();
    }
  });

  it('readyz answers 503 naming database as down while the database refuses connections, healthz stays 200, and readiness returns after', async () => {
    await whileTheDatabaseRefuses(service, async () => {
      const started = Date.now();
      const answer = await probe(service.publicUrl, '/readyz');
      assert.ok(Date.now() - started < 3_000, 'the database check times out quickly');
      assert.equal(answer.status, 503);
      assert.equal(answer.body.status, 'not_ready');
      assert.equal(answer.body.checks?.['database'], 'down');
      assert.equal((await probe(service.adminUrl, '/readyz')).status, 503, 'on the admin listener too');
      assert.equal((await probe(service.publicUrl, '/healthz')).status, 200, 'the process still serves');
    });
    await eventually(
      async () => ((await probe(service.publicUrl, '/readyz')).status === 200 ? true : undefined),
      'readiness after the database came back',
    );
  });

  it('while the database refuses connections, migrations reads down beside database (the applied ones cannot be read), and the runbook reads that as the outage, sending to migration:run only with database up', async () => {
    await whileTheDatabaseRefuses(service, async () => {
      const answer = await probe(service.publicUrl, '/readyz');
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.body, {
        status: 'not_ready',
        checks: { database: 'down', migrations: 'down', deliveryWorker: 'up' },
      });
    });
    const runbook = notReadyRunbook();
    assert.match(runbook, /While `database` is down, `migrations` reads down as well only because/, runbook);
    // The condition the runbook gives for running the migrations: the clause before its arrow.
    const beforeAdvice = runbook.split('→').find((_, index, parts) => parts[index + 1]?.includes('migration:run'));
    const condition = beforeAdvice?.split(/[.?] /).pop()?.trim();
    assert.equal(condition, '`migrations` down with `database` up', runbook);
    await eventually(
      async () => ((await probe(service.publicUrl, '/readyz')).status === 200 ? true : undefined),
      'readiness after the database came back',
    );
  });

  it('readyz answers 503 naming deliveryWorker as down when the worker loop has not run for longer than the limit', async () => {
    const worker = service.running.app.get(WebhookDeliveryWorker);
    // The worker's own sign of life, as a stuck loop would leave it: last sweep a minute ago.
    Object.defineProperty(worker, 'lastLoopAt', { configurable: true, get: () => Date.now() - 60_000 });
    try {
      const answer = await probe(service.publicUrl, '/readyz');
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.body, {
        status: 'not_ready',
        checks: { database: 'up', migrations: 'up', deliveryWorker: 'down' },
      });
    } finally {
      delete (worker as unknown as Record<string, unknown>)['lastLoopAt'];
    }
    assert.equal((await probe(service.publicUrl, '/readyz')).status, 200);
  });

  it('readyz shares the check in flight: a burst of concurrent probes runs one check at a time, and every probe is answered', async () => {
    const health = service.running.app.get(HealthCheckService, { strict: false });
    const check = health.check.bind(health);
    let checks = 0;
    let running = 0;
    let mostAtOnce = 0;
    health.check = async (...args) => {
      checks += 1;
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      try {
        return await check(...args);
      } finally {
        running -= 1;
      }
    };
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => probe(service.publicUrl, '/readyz')));
      assert.deepEqual(
        answers.map((answer) => answer.status),
        answers.map(() => 200),
      );
      assert.equal(mostAtOnce, 1, 'checks ran at the same time');
      assert.ok(checks < 40, `${checks} checks for 40 probes`);
    } finally {
      health.check = check;
    }
  });

  it('readyz answers 503 {status: not_ready} with Connection: close at once when shutdown begins; healthz stays 200', async () => {
    // The shutdown's first step, alone: the drain itself is proved in shutdown.e2e-spec.
    service.running.app.get(ReadinessService).beginShutdown();
    const answer = await probe(service.publicUrl, '/readyz');
    assert.equal(answer.status, 503);
    assert.deepEqual(answer.body, { status: 'not_ready', checks: { shutdown: 'down' } });
    assert.equal(answer.headers.get('connection'), 'close');
    assert.equal((await probe(service.adminUrl, '/healthz')).status, 200);
  });
});
