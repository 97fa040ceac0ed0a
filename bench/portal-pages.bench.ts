import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { PortalClient, tokenOf } from '../test/support/portal-client';
import { benchEnvironment, measure, runWhenExecuted, type LatencySummary } from './support/bench-environment';
import { webhookWithLog } from './support/webhook-with-log';

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

export async function main(): Promise<void> {
  const environment = await benchEnvironment(seed, { WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });
  try {
    const adminUrl = environment.service.adminUrl;
    if (adminUrl === null) throw new Error('no admin listener');
    const { publicUrl } = environment.service;
    if (publicUrl === null) throw new Error('no public listener');
    const webhookId = await webhookWithLog(environment, ORGANISER, DELIVERIES);
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
