import assert from 'node:assert/strict';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { PortalClient, tokenOf } from '../test/support/portal-client';
import { benchEnvironment, measure, runWhenExecuted, type LatencySummary } from './support/bench-environment';

/**
 * Latency of every portal page for one organiser whose subscription has a
 * delivery log of 5,000 deliveries (three attempts each), on the real
 * service over a throwaway embedded PostgreSQL, through a session opened
 * from a link. Each page is fetched sequentially (one in flight); each
 * figure has the round trip and the server's own time (its `Server-Timing`
 * header: arrival to rendered page). Target: server p95 under 200 ms on every
 * page. Prints one JSON line. `PORTAL_BENCH_REQUESTS` sets the requests per page.
 */
const ORGANISER = 'org_000000000000000000portal';
const DELIVERIES = 5_000;
const REQUESTS = Number(process.env['PORTAL_BENCH_REQUESTS'] ?? 100);
const TARGET_P95_MS = 200;

async function seed(db: DataSource): Promise<void> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`INSERT INTO organiser (id, name) VALUES ($1, 'Portal Benchmark Organiser')`, [ORGANISER]);
  } finally {
    await runner.release();
  }
}

/** A subscription made through the public API (its secret sealed as in production), then a long log written directly. */
async function webhookWithLog(publicUrl: string, adminUrl: string, adminToken: string, databaseUrl: string) {
  const minted = await fetch(`${adminUrl}/internal/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      principal: { type: 'organiser', id: ORGANISER },
      scopes: ['webhooks:write'],
      actorRole: 'owner',
    }),
  });
  const key = ((await minted.json()) as { data: { key: string } }).data.key;
  const created = await fetch(`${publicUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://127.0.0.1:9/hooks', events: ['order.confirmed'], enabled: false }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  const webhookId = ((await created.json()) as { data: { id: string } }).data.id;
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    // The history's day partitions for every day the deliveries span (the retention job makes only the days ahead).
    await db.query(
      `SELECT webhook_history_ensure_partitions(((now() - $1::int * interval '1 minute') AT TIME ZONE 'UTC')::date,
                                                (now() AT TIME ZONE 'UTC')::date)`,
      [DELIVERIES],
    );
    await db.query(
      `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, attempts, created_at, completed_at)
       SELECT 'dlv-' || g, $1, 'order.confirmed', 'ord_' || g, '{}'::bytea, (ARRAY['succeeded', 'failed', 'skipped'])[1 + g % 3], 3,
              now() - g * interval '1 minute', now() - g * interval '1 minute'
         FROM generate_series(1, $2::int) g`,
      [webhookId, DELIVERIES],
    );
    await db.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms)
       SELECT 'dlv-' || g, now() - g * interval '1 minute' + a * interval '1 second', (ARRAY['500', 'timeout', '200'])[a], 40 + a
         FROM generate_series(1, $1::int) g, generate_series(1, 3) a`,
      [DELIVERIES],
    );
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
  return webhookId;
}

export async function main(): Promise<void> {
  const environment = await benchEnvironment(seed, { WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });
  try {
    const adminUrl = environment.service.adminUrl;
    if (adminUrl === null) throw new Error('no admin listener');
    const { publicUrl } = environment.service;
    if (publicUrl === null) throw new Error('no public listener');
    const webhookId = await webhookWithLog(publicUrl, adminUrl, environment.adminToken, environment.databaseUrl);
    const link = await fetch(`${adminUrl}/internal/portal-links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${environment.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ accountId: ORGANISER, ttlSeconds: 3600 }),
    });
    const url = ((await link.json()) as { data: { url: string } }).data.url;
    const client = new PortalClient(publicUrl);
    await client.open(tokenOf(url));
    const pages: Record<string, string> = {
      'open (entry page)': '/portal',
      subscriptions: '/portal/subscriptions',
      [`subscription (${DELIVERIES} deliveries)`]: `/portal/subscriptions/${webhookId}`,
      verify: '/portal/verify',
    };
    const figures: Record<string, LatencySummary & { serverP50Ms: number; serverP95Ms: number; serverP99Ms: number }> =
      {};
    for (const [name, path] of Object.entries(pages)) {
      const serverMs: number[] = [];
      const roundTrip = await measure(REQUESTS, 1, async () => {
        const page = await client.get(path);
        assert.equal(page.status, 200, `${name}: ${page.status}`);
        serverMs.push(Number(/page;dur=([\d.]+)/.exec(page.headers.get('server-timing') ?? '')?.[1]));
      });
      serverMs.sort((a, b) => a - b);
      const at = (q: number): number => serverMs[Math.min(serverMs.length - 1, Math.floor(q * serverMs.length))] ?? NaN;
      figures[name] = { ...roundTrip, serverP50Ms: at(0.5), serverP95Ms: at(0.95), serverP99Ms: at(0.99) };
    }
    const slowest = Math.max(...Object.values(figures).map((figure) => figure.serverP95Ms));
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'portal-pages', deliveries: DELIVERIES, requestsPerPage: REQUESTS, slowestServerP95Ms: slowest, underTarget: slowest < TARGET_P95_MS, figures })}\n`,
    );
  } finally {
    await environment.close();
  }
}

runWhenExecuted(module, main);
