import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { DashboardClient, csrfOf } from './support/dashboard-client';
import { databaseClient } from './support/database-client';
import { eventually, sleep } from './support/eventually';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, type HttpResult } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { startRoundRobinProxy, type RoundRobinProxy } from './support/round-robin-proxy';
import { scheduledJobRuns } from './support/scheduled-job-runs';
import { startServiceProcess, type ServiceProcess } from './support/service-process';
import { freshDatabase } from './support/test-database';
import type { TestService } from './support/test-service';

/** The worker's lease: the acknowledgement deadline plus the margin for recording the attempt. */
const TIMEOUT_MS = 2_000;
const LEASE_MS = TIMEOUT_MS + 5_000;
const READS_PER_WINDOW = 600;
/** Every scheduled job's period in this rig (SCHEDULED_JOB_PERIOD_SECONDS), and the span its runs are counted over. */
const JOB_PERIOD_MS = 1_000;
const JOB_SPAN_MS = 4_000;
const JOB_SAMPLE_EVERY_MS = 200;

/** One reading of `scheduled_job_runs_total` on each instance, and when it was taken (before and after). */
interface JobRunSample {
  fromMs: number;
  toMs: number;
  /** Runs by job, one map per instance, in the order the instances were given. */
  perInstance: Array<Map<string, number>>;
}

interface JobRunSpan {
  samples: JobRunSample[];
  /** Every start of each job's run seen in `job_lease` during the span, in ms on the database clock. */
  starts: Map<string, Set<number>>;
}

interface Reply {
  status: number;
  body: string;
  /** `X-RateLimit-Reset`: the end of the budget window that counted the request, by the database's clock. */
  windowEnd: string | undefined;
}

/** One request over a keep-alive agent, as a client behind a load balancer sends it. */
function send(agent: Agent, url: string, method: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const windowEnd = res.headers['x-ratelimit-reset'];
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          windowEnd: Array.isArray(windowEnd) ? windowEnd[0] : windowEnd,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs `count` calls of `work` with at most `concurrency` at once. */
async function inParallel<T>(count: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) results[i] = await work(i);
    }),
  );
  return results;
}

/**
 * Three service processes on one PostgreSQL, as a deployment runs them: two
 * `api` instances behind a round-robin load balancer that sends only to
 * instances whose `/readyz` answers 200, and one `worker`. Every promise of
 * the contracts holds across them.
 */
describe('several instances on one PostgreSQL: two api, one worker, behind a round-robin proxy', () => {
  const adminToken = randomBytes(16).toString('hex');
  const processes: ServiceProcess[] = [];
  let env: Record<string, string>;
  let db: Client;
  let receiver: HttpsReceiver;
  let apiA: ServiceProcess;
  let apiB: ServiceProcess;
  let worker: ServiceProcess;
  let proxy: RoundRobinProxy;
  let organiser: Organiser;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });

  const serviceOf = (instance: ServiceProcess): TestService =>
    ({ publicUrl: instance.publicUrl, adminUrl: instance.adminUrl, adminToken }) as TestService;
  const admin = (instance: ServiceProcess, method: string, path: string, body?: unknown): Promise<HttpResult<any>> =>
    internalApi(serviceOf(instance))(method, path, body === undefined ? {} : { body });
  const jobRunsOf = (instance: ServiceProcess): Promise<Map<string, number>> => scheduledJobRuns(serviceOf(instance));
  /**
   * Reads every instance's job runs (and `job_lease`) every JOB_SAMPLE_EVERY_MS for JOB_SPAN_MS, from the
   * moment every job has run once (its first run is due a period after it was first seen).
   */
  const countJobRuns = async (instances: ServiceProcess[]): Promise<JobRunSpan> => {
    await eventually(async () => {
      const runs = (await Promise.all(instances.map(jobRunsOf))).flatMap((byJob) => [...byJob.entries()]);
      const jobs = new Set(runs.map(([job]) => job));
      const ran = new Set(runs.filter(([, count]) => count > 0).map(([job]) => job));
      return jobs.size > 0 && ran.size === jobs.size ? true : undefined;
    }, 'a first run of every scheduled job');
    const span: JobRunSpan = { samples: [], starts: new Map() };
    for (;;) {
      const fromMs = performance.now();
      const perInstance = await Promise.all(instances.map(jobRunsOf));
      span.samples.push({ fromMs, toMs: performance.now(), perInstance });
      const leases = await db.query<{ name: string; started_ms: number }>(
        `SELECT name, extract(epoch FROM last_started_at)::float8 * 1000 AS started_ms FROM job_lease WHERE holder <> ''`,
      );
      for (const { name, started_ms } of leases.rows) {
        span.starts.set(name, (span.starts.get(name) ?? new Set<number>()).add(Number(started_ms)));
      }
      if (fromMs - (span.samples[0]?.fromMs ?? fromMs) >= JOB_SPAN_MS) return span;
      await sleep(JOB_SAMPLE_EVERY_MS);
    }
  };
  let jobRunSpan: Promise<JobRunSpan>;

  const start = async (role: 'api' | 'worker', ports: Record<string, string> = {}): Promise<ServiceProcess> => {
    const started = await startServiceProcess({ ...env, ...ports, SERVICE_ROLE: role });
    processes.push(started);
    return started;
  };

  before(async () => {
    const databaseUrl = await freshDatabase();
    db = await databaseClient(databaseUrl);
    receiver = await startHttpsReceiver(() => ({ status: 200 }));
    env = {
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: adminToken,
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_FAILURES_PER_CLIENT: '0',
      SHUTDOWN_TIMEOUT_MS: '5000',
      DB_POOL_MAX: '10',
      SCHEDULED_JOB_PERIOD_SECONDS: String(JOB_PERIOD_MS / 1000),
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
    };
    [apiA, apiB, worker] = await Promise.all([start('api'), start('api'), start('worker')]);
    proxy = await startRoundRobinProxy([apiA.publicUrl, apiB.publicUrl]);
    organiser = await fixtures(serviceOf(apiA)).organiser({
      scopes: ['events:read', 'orders:read', 'webhooks:read', 'webhooks:write'],
    });
    // Counted while the next tests run (none of them stops an instance), and asserted by its own test.
    jobRunSpan = countJobRuns([apiA, apiB, worker]);
    jobRunSpan.catch(() => undefined);
  });

  after(async () => {
    agent.destroy();
    await proxy?.close();
    for (const instance of processes) instance.child.kill('SIGKILL');
    await Promise.all(processes.map((instance) => instance.exited));
    await receiver?.close();
    await db?.end();
  });

  it('lists the three live instances with their roles, on every instance', async () => {
    for (const instance of [apiA, apiB, worker]) {
      const listed = await admin(instance, 'GET', '/internal/instances');
      assert.equal(listed.status, 200);
      const { data } = listed.body as { data: Array<{ role: string }> };
      assert.deepEqual(data.map((row) => row.role).sort(), ['api', 'api', 'worker']);
    }
  });

  it('serves at most the account read budget across both api instances, and at most one unit less per other instance', async () => {
    // A window must not end during the burst: wait for a fresh one when the database's minute is nearly over.
    const [clock] = (
      await db.query<{ left: number }>(
        `SELECT extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now())::float AS left`,
      )
    ).rows;
    if ((clock?.left ?? 60) < 20) await sleep((clock?.left ?? 0) * 1000 + 250);
    const key = await fixtures(serviceOf(apiB)).key({ type: 'organiser', id: organiser.id }, ['events:read']);
    const replies = await inParallel(1_000, 16, () =>
      send(agent, `${proxy.url}/v1/me`, 'GET', { authorization: `Bearer ${key}` }),
    );
    const served = replies.filter((reply) => reply.status === 200).length;
    const refused = replies.filter((reply) => reply.status === 429).length;
    assert.equal(served + refused, 1_000, 'every read is served or refused with 429');
    // Counted per window, by the window each answer names: a burst slowed past the window's end starts a fresh budget.
    const windows = new Map<string, { served: number; refused: number }>();
    for (const reply of replies) {
      assert.ok(reply.windowEnd !== undefined, 'every answer names its window');
      const window = windows.get(reply.windowEnd) ?? { served: 0, refused: 0 };
      if (reply.status === 200) window.served += 1;
      else window.refused += 1;
      windows.set(reply.windowEnd, window);
    }
    for (const [end, window] of windows) {
      assert.ok(
        window.served <= READS_PER_WINDOW,
        `${window.served} reads served in the window ending ${end}, more than the budget`,
      );
      if (window.refused > 0) {
        assert.ok(
          window.served >= READS_PER_WINDOW - 1,
          `${window.served} reads served before refusals in the window ending ${end}: more than one unit went unused`,
        );
      }
    }
    assert.ok(refused > 0, 'the budget was reached');
    assert.ok((proxy.forwarded.get(apiA.publicUrl) ?? 0) > 300 && (proxy.forwarded.get(apiB.publicUrl) ?? 0) > 300);
  });

  it('refuses a key revoked through one instance on the other within 1 s', async () => {
    // An account of its own: the budget test before this one used up the first account's reads on every instance.
    const other = await fixtures(serviceOf(apiA)).organiser();
    const minted = await admin(apiA, 'POST', '/internal/keys', {
      principal: { type: 'organiser', id: other.id },
      actorRole: 'owner',
    });
    const { data } = minted.body as { data: { id: string; key: string } };
    const me = (): Promise<Reply> =>
      send(agent, `${apiB.publicUrl}/v1/me`, 'GET', { authorization: `Bearer ${data.key}` });
    assert.equal((await me()).status, 200, 'the other instance knows (and caches) the key');
    assert.equal((await admin(apiA, 'DELETE', `/internal/keys/${data.id}`)).status, 200);
    const revokedAt = performance.now();
    await eventually(async () => ((await me()).status === 401 ? true : undefined), 'the revocation', 1_000);
    assert.ok(performance.now() - revokedAt < 1_000);
  });

  it('keeps a dashboard session on every instance, and a sign-out on one ends it on the other', async () => {
    const onA = new DashboardClient(apiA.adminUrl);
    const csrf = await onA.signIn(adminToken);
    const onB = new DashboardClient(apiB.adminUrl);
    for (const [name, value] of onA.cookies) onB.cookies.set(name, value);
    assert.equal((await onB.get('/internal/dashboard/accounts')).status, 200, 'signed in on the other instance');
    // A form rendered by one instance is accepted by the other.
    const created = await onB.post('/internal/dashboard/organisers', { name: 'Made on B' }, csrf);
    assert.equal(created.status, 303, created.html);
    const shown = await onA.get(created.location ?? '/internal/dashboard/accounts');
    assert.equal(shown.status, 200);
    assert.match(shown.html, /Made on B/, 'what one instance did, the other shows');
    const page = await onB.get('/internal/dashboard/accounts');
    assert.equal((await onB.post('/internal/dashboard/sign-out', {}, csrfOf(page.html))).status, 303);
    const afterSignOut = await onA.get('/internal/dashboard/accounts');
    assert.equal(afterSignOut.status, 303, 'the session ended on the first instance too');
    assert.match(afterSignOut.location ?? '', /sign-in/);
  });

  it('runs each scheduled job once per period across the three instances, only where the role runs jobs', async (t) => {
    const { samples, starts } = await jobRunSpan;
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    const periods = Math.floor((last.fromMs - first.fromMs) / JOB_PERIOD_MS);
    const jobs = [...last.perInstance[2]!.keys()].sort();
    assert.ok(jobs.length >= 4, `scheduled jobs: ${jobs.join(', ')}`);
    for (const runs of last.perInstance)
      assert.deepEqual([...runs.keys()].sort(), jobs, 'every instance shows every job');
    for (const job of jobs) {
      const total = (sample: JobRunSample): number =>
        sample.perInstance.reduce((sum, runs) => sum + (runs.get(job) ?? 0), 0);
      const ran = total(last) - total(first);
      t.diagnostic(`${job}: ${ran} runs in ${periods} periods of ${JOB_PERIOD_MS} ms`);
      assert.ok(ran >= periods - 1 && ran <= periods + 1, `${job} ran ${ran} times in ${periods} periods`);
      assert.deepEqual(
        [last.perInstance[0]!.get(job), last.perInstance[1]!.get(job)],
        [0, 0],
        `${job} ran on an api instance`,
      );
      // Never two in one period: not between two readings well within a period (a margin for when each
      // count was read), nor as two starts recorded less than a period apart on the database clock.
      for (const [i, earlier] of samples.entries()) {
        for (const later of samples.slice(i + 1).filter((s) => s.toMs - earlier.fromMs <= JOB_PERIOD_MS * 0.8)) {
          assert.ok(total(later) - total(earlier) <= 1, `${job} ran twice within ${later.toMs - earlier.fromMs} ms`);
        }
      }
      const startedAt = [...(starts.get(job) ?? [])].sort((a, b) => a - b);
      for (let i = 1; i < startedAt.length; i += 1) {
        const gap = startedAt[i]! - startedAt[i - 1]!;
        assert.ok(gap >= JOB_PERIOD_MS - 1, `${job} started twice within ${gap.toFixed(0)} ms`);
      }
    }
  });

  it('delivers 1,000 confirmations exactly once each while a second worker starts and the first is killed, none again while its lease was valid', async () => {
    const hook = await fixtures(serviceOf(apiA)).webhook(organiser.key, `${receiver.origin}/hook`, ['order.confirmed']);
    const event = await fixtures(serviceOf(apiA)).event(organiser.id);
    const api = [apiA, apiB];
    const orders = await inParallel(1_000, 16, async (i) => {
      const created = await admin(api[i % 2]!, 'POST', '/internal/orders', {
        eventId: event.id,
        status: 'pending',
        lineItems: [{ quantity: 1, unitAmountMinor: 100 }],
        totalAmountMinor: 100,
      });
      assert.equal(created.status, 201);
      return (created.body as { data: { id: string } }).data.id;
    });

    const firstWorker = worker;
    let killedAt = 0;
    const secondWorker = start('worker');
    const halfway = receiver
      .waitFor((requests) => requests.length >= 500, 60_000)
      .then(() => {
        killedAt = Date.now();
        firstWorker.child.kill('SIGKILL');
      });
    await inParallel(orders.length, 16, async (i) => {
      const confirmed = await admin(api[i % 2]!, 'POST', `/internal/orders/${orders[i]!}/confirm`);
      assert.equal(confirmed.status, 200);
    });
    worker = await secondWorker;
    await halfway;

    const expected = (
      await db.query<{ id: string }>(`SELECT id FROM webhook_delivery_all WHERE subscription_id = $1`, [hook.id])
    ).rows.map((row) => row.id);
    assert.equal(expected.length, 1_000, 'one delivery per confirmation');
    const arrivals = await receiver.waitFor(
      (requests) => new Set(requests.map((r) => r.headers['service-delivery'])).size >= 1_000,
      LEASE_MS + 30_000,
    );
    const byId = new Map<string, number[]>();
    for (const request of arrivals) {
      const id = String(request.headers['service-delivery']);
      byId.set(id, [...(byId.get(id) ?? []), request.receivedAt]);
    }
    assert.deepEqual([...byId.keys()].sort(), [...expected].sort(), 'every confirmation arrived');
    // At least once: an attempt the killed worker made but never recorded is made again, and only once
    // its lease has run out. Every other delivery arrives exactly once.
    const again = [...byId.entries()].filter(([, times]) => times.length > 1);
    assert.ok(again.length <= 64, `${again.length} deliveries arrived twice: more than the killed worker held`);
    for (const [id, times] of again) {
      assert.equal(times.length, 2, `${id} arrived ${times.length} times`);
      assert.ok(times[0]! <= killedAt + 100, `${id} was sent twice, though not in flight when the worker died`);
      assert.ok(times[1]! - times[0]! >= LEASE_MS - 2_000, `${id} was sent again while its lease was valid`);
    }
    await eventually(
      async () => {
        const [left] = (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_delivery_all WHERE subscription_id = $1 AND status <> 'succeeded'`,
            [hook.id],
          )
        ).rows;
        return left?.n === 0 ? true : undefined;
      },
      'every delivery recorded as succeeded',
      LEASE_MS + 10_000,
    );
  });

  it('loses no accepted request through a rolling restart of both api instances behind the proxy', async () => {
    const key = await fixtures(serviceOf(apiA)).key({ type: 'organiser', id: organiser.id }, ['events:read']);
    const outcomes: Array<number | string> = [];
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (loading) {
          outcomes.push(
            await send(agent, `${proxy.url}/v1/me`, 'GET', { authorization: `Bearer ${key}` }).then(
              (reply) => reply.status,
              (error: Error) => error.message,
            ),
          );
          await sleep(5);
        }
      }),
    );
    for (const old of [apiA, apiB]) {
      const ports = { PORT: new URL(old.publicUrl).port, ADMIN_PORT: new URL(old.adminUrl).port };
      old.child.kill('SIGTERM');
      assert.equal(await old.exited, 0, 'a drained instance exits cleanly');
      const restarted = await start('api', ports);
      await eventually(
        async () => ((await fetch(`${restarted.publicUrl}/readyz`)).status === 200 ? true : undefined),
        'the restarted instance ready',
      );
      await sleep(200);
    }
    loading = false;
    await load;
    const failed = outcomes.filter((outcome) => outcome !== 200 && outcome !== 429);
    assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests failed`);
    assert.ok(outcomes.length > 50, 'the load ran through both restarts');
  });
});
