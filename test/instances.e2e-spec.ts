import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEDICATED_CONNECTIONS } from '../src/database/instances/connection-budget';
import {
  INSTANCE_HEARTBEAT,
  InstanceRegistry,
  MISSED_HEARTBEATS_WHEN_GONE,
} from '../src/database/instances/instance-registry';
import { captureLog } from './support/captured-log';
import { DashboardClient } from './support/dashboard-client';
import { assertErrorBody } from './support/error-body';
import { internalApi } from './support/http-client';
import { secondInstance } from './support/second-instance';
import type { TestService } from './support/test-service';
import { startTestService } from './support/test-service';
import { withApp } from './support/with-app';

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;
const registryOf = (service: TestService): InstanceRegistry => service.running.app.get(InstanceRegistry);
const GONE_SECONDS = (MISSED_HEARTBEATS_WHEN_GONE * INSTANCE_HEARTBEAT.intervalMs) / 1000;

describe('the instance registry', () => {
  const a = withApp();
  let b: TestService | undefined;

  before(async () => {
    b = await secondInstance(a.service, { SERVICE_ROLE: 'api' });
  });
  after(async () => {
    await b?.close();
  });

  async function listed(): Promise<Array<Record<string, string>>> {
    const result = await a.admin('GET', '/internal/instances');
    assert.equal(result.status, 200, result.text);
    return result.body.data as Array<Record<string, string>>;
  }

  it('lists the live instances on GET /internal/instances with id, host, role (SERVICE_ROLE), version, startedAt and lastSeenAt', async () => {
    const instances = await listed();
    assert.deepEqual(
      instances.map((instance) => instance['id']).sort(),
      [registryOf(a.service).id, registryOf(b!).id].sort(),
    );
    for (const instance of instances) {
      assert.deepEqual(Object.keys(instance).sort(), ['host', 'id', 'lastSeenAt', 'role', 'startedAt', 'version']);
      assert.equal(instance['role'], instance['id'] === registryOf(a.service).id ? 'all' : 'api', 'SERVICE_ROLE');
      assert.equal(instance['version'], PACKAGE_VERSION);
      assert.ok(instance['host']);
      assert.match(instance['startedAt'] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(instance['lastSeenAt'] ?? '') >= Date.parse(instance['startedAt'] ?? ''));
    }
  });

  it('names each instance where its process is seen: its id, pid and host in a start-up log line and in its registry row', async () => {
    const log = captureLog();
    const c = await secondInstance(a.service, { SERVICE_ROLE: 'api', LOG_LEVEL: 'info' }, { logTo: log.stream });
    try {
      const { id } = registryOf(c);
      const listed = (await a.admin('GET', '/internal/instances')).body.data as Array<Record<string, string>>;
      const row = listed.find((instance) => instance['id'] === id);
      assert.ok(row, 'listed');
      const said = log.lines.filter((line) => String(line['msg']).includes(id));
      assert.equal(said.length, 1, log.text());
      assert.equal(said[0]?.['msg'], `registered as instance ${id} (pid ${process.pid} on ${row['host']}, role api)`);
      const { rows } = await a.db.query<{ pid: number }>(`SELECT pid FROM service_instance WHERE id = $1`, [id]);
      assert.equal(rows[0]?.pid, process.pid);
    } finally {
      await c.close();
    }
  });

  it('answers GET /internal/instances only with the admin token', async () => {
    assertErrorBody(await internalApi(a.service)('GET', '/internal/instances', { token: null }), 401, 'unauthorized');
  });

  it('counts an instance three heartbeats late as gone (on the database clock), and purges it at the next heartbeat', async () => {
    const row = (id: string, secondsAgo: number) =>
      a.db.query(
        `INSERT INTO service_instance (id, host, role, version, pool_max, dedicated_connections, started_at, last_seen_at)
         VALUES ($1, 'elsewhere', 'all', '0.0.1', 20, 2, now() - interval '1 hour', now() - make_interval(secs => $2))`,
        [id, secondsAgo],
      );
    await row('late-by-two-heartbeats', GONE_SECONDS - INSTANCE_HEARTBEAT.intervalMs / 1000);
    await row('late-by-three-heartbeats', GONE_SECONDS + 1);
    const ids = (await listed()).map((instance) => instance['id']);
    assert.ok(ids.includes('late-by-two-heartbeats'));
    assert.ok(!ids.includes('late-by-three-heartbeats'));
    await registryOf(a.service).heartbeat();
    const { rows } = await a.db.query(`SELECT id FROM service_instance WHERE id LIKE 'late-%'`);
    assert.deepEqual(
      rows.map((found: { id: string }) => found.id),
      ['late-by-two-heartbeats'],
    );
    await a.db.query(`DELETE FROM service_instance WHERE id LIKE 'late-%'`);
  });

  it('counts the live instances in the service_instances gauge', async () => {
    const scraped = await a.admin('GET', '/internal/metrics');
    assert.match(scraped.text, /^service_instances 2$/m);
  });

  it('shows the live instances on the dashboard', async () => {
    const dashboard = new DashboardClient(a.service.adminUrl);
    await dashboard.signIn(a.service.adminToken);
    const page = await dashboard.get('/internal/dashboard/instances');
    assert.equal(page.status, 200, page.html);
    assert.ok(page.html.includes(registryOf(a.service).id));
    assert.ok(page.html.includes(registryOf(b!).id));
  });

  it('documents GET /internal/instances in the internal OpenAPI document', async () => {
    const document = await a.admin('GET', '/internal/openapi.json');
    assert.ok(document.body.paths['/internal/instances']?.get, 'the route is documented');
  });

  it('removes an instance from the registry when it shuts down', async () => {
    const id = registryOf(b!).id;
    await b!.close();
    b = undefined;
    const { rows } = await a.db.query(`SELECT id FROM service_instance WHERE id = $1`, [id]);
    assert.equal(rows.length, 0);
    assert.deepEqual(
      (await listed()).map((instance) => instance['id']),
      [registryOf(a.service).id],
    );
  });
});

describe('the connection budget', () => {
  const a = withApp();
  let available: number;

  before(async () => {
    const { rows } = await a.db.query<{ available: number }>(
      `SELECT (current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
               - COALESCE(current_setting('reserved_connections', true)::int, 0)) AS available`,
    );
    available = Number(rows[0]?.available);
  });

  it('refuses to start with a DB_POOL_MAX the server cannot hold, naming both figures', async () => {
    await assert.rejects(
      startTestService({ DB_POOL_MAX: '5000' }),
      (error: Error) =>
        error.message.includes('DB_POOL_MAX=5000') &&
        error.message.includes(`would need ${5000 + DEDICATED_CONNECTIONS} connections`) &&
        error.message.includes(`the server allows ${available} `),
    );
  });

  it("adds up the live instances' pools: a pool that fits alone is refused beside a live instance", async () => {
    const first = 20 + DEDICATED_CONNECTIONS;
    const poolMax = available - DEDICATED_CONNECTIONS - 10; // fits on its own, not beside the first instance
    const refused = secondInstance(a.service, { DB_POOL_MAX: String(poolMax) });
    await assert.rejects(
      refused,
      (error: Error) =>
        error.message.includes(`1 other instance(s) with ${first}`) &&
        error.message.includes(`would need ${first + poolMax + DEDICATED_CONNECTIONS} connections`) &&
        error.message.includes(`the server allows ${available} `),
    );
    const fits = await secondInstance(a.service, { DB_POOL_MAX: String(available - first - DEDICATED_CONNECTIONS) });
    await fits.close();
  });

  it('waits for an instance that missed its heartbeats to be counted as gone, instead of refusing its replacement', async () => {
    const poolMax = available - 20 - 2 * DEDICATED_CONNECTIONS; // fits beside the first instance, not beside the dead one too
    // Killed without deregistering: late (its last heartbeat over 1.5 intervals ago) and gone 4 s from now, which
    // leaves a start slowed by a busy machine time to find it still there.
    await a.db.query(
      `INSERT INTO service_instance (id, host, role, version, pool_max, dedicated_connections, started_at, last_seen_at)
       VALUES ('killed', 'elsewhere', 'api', '0.0.1', $1, $2, now() - interval '1 hour', now() - make_interval(secs => $3))`,
      [poolMax, DEDICATED_CONNECTIONS, GONE_SECONDS - 4],
    );
    const log = captureLog();
    try {
      const startedAt = Date.now();
      const replacement = await secondInstance(
        a.service,
        { DB_POOL_MAX: String(poolMax), LOG_LEVEL: 'info' },
        { logTo: log.stream },
      );
      await replacement.close();
      assert.ok(Date.now() - startedAt >= 500, 'it waited for the dead instance to age out');
      assert.ok(log.lines.some((line) => String(line['msg']).includes('missed a heartbeat; waiting up to')));
    } finally {
      await a.db.query(`DELETE FROM service_instance WHERE id = 'killed'`);
    }
    // One still heartbeating is never waited for: refused at once.
    await a.db.query(
      `INSERT INTO service_instance (id, host, role, version, pool_max, dedicated_connections, started_at, last_seen_at)
       VALUES ('alive', 'elsewhere', 'api', '0.0.1', $1, $2, now() - interval '1 hour', now())`,
      [poolMax, DEDICATED_CONNECTIONS],
    );
    try {
      await assert.rejects(
        secondInstance(a.service, { DB_POOL_MAX: String(poolMax) }),
        /does not fit the database server/,
      );
    } finally {
      await a.db.query(`DELETE FROM service_instance WHERE id = 'alive'`);
    }
  });
});
