import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { startService } from '../src/bootstrap';
import { loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { ensureDatabase } from '../src/database/ensure-database';

/**
 * Latency of `GET /v1/orders` (first page, limit 50) for one organiser with
 * one million confirmed orders across 1,000 events, on the real service over
 * a throwaway embedded PostgreSQL. Prints one JSON line. Not a test: it
 * asserts only that the answers are what a client would expect.
 */
const ORDERS = 1_000_000;
const EVENTS = 1_000;
const REQUESTS = 200;
const WARM_UP = 20;
const LIMIT = 50;
const DATABASE = 'orders_bench';

export interface OrdersFirstPageResult {
  benchmark: 'orders-first-page';
  orders: number;
  events: number;
  requests: number;
  limit: number;
  seedSeconds: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  requestsPerSecond: number;
}

function log(message: string): void {
  process.stderr.write(`[orders-bench] ${message}\n`);
}

/** Nearest-rank percentile of an ascending list. */
function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round((sorted[index] ?? Number.NaN) * 100) / 100;
}

async function migrate(url: string): Promise<void> {
  const migrator = new DataSource({ ...dataSourceOptions(url), entities: [] });
  await migrator.initialize();
  try {
    await migrator.runMigrations();
  } finally {
    await migrator.destroy();
  }
}

/** One organiser, its events, and a million confirmed orders spread over them, all set-based. */
async function seed(url: string, organizerId: string): Promise<void> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(`INSERT INTO organiser (id, name) VALUES ($1, 'Benchmark Organiser')`, [organizerId]);
    await db.query(
      `INSERT INTO event (id, organizer_id, visibility, start_time, title)
       SELECT 'evt_' || lpad(to_hex(g), 24, '0'), $1, 'public', now() + g * interval '1 hour', '{"EN": "Event"}'::jsonb
         FROM generate_series(1, $2::int) g`,
      [organizerId, EVENTS],
    );
    // Replica mode skips the per-row foreign-key checks of a bulk load whose references are right by construction.
    await db.query(`SET session_replication_role = replica`);
    await db.query(
      `INSERT INTO "order" (id, event_id, organizer_id, status, is_rsvp, quantity, total_amount_minor, currency,
                            billing_name, billing_email, attribution_source, created_at, updated_at)
       SELECT 'ord_' || lpad(to_hex(g), 24, '0'),
              'evt_' || lpad(to_hex(1 + g % $2::int), 24, '0'),
              $1, 'confirmed', g % 10 = 0, 1 + g % 4, 1000 * (1 + g % 4),
              (ARRAY['eur', 'EUR', NULL, 'Usd'])[1 + g % 4],
              'Buyer ' || g, 'buyer' || g || '@example.test', NULL,
              now() - g * interval '1 second', now() - (g % 86400) * interval '1 second'
         FROM generate_series(1, $3::int) g`,
      [organizerId, EVENTS, ORDERS],
    );
    await db.query(`SET session_replication_role = origin`);
    await db.query(`VACUUM ANALYZE "order"`);
    await db.query(`VACUUM ANALYZE event`);
  } finally {
    await db.end();
  }
}

export async function main(): Promise<OrdersFirstPageResult> {
  const folder = mkdtempSync(join(tmpdir(), 'orders-bench-'));
  const server = await startEmbeddedPostgres({ directory: join(folder, 'pg'), persistent: false, log });
  try {
    await ensureDatabase(server.adminUrl, DATABASE);
    const url = server.urlFor(DATABASE);
    await migrate(url);

    const organizerId = `org_${randomBytes(12).toString('hex')}`;
    const seedStarted = performance.now();
    log(`seeding ${ORDERS} orders across ${EVENTS} events`);
    await seed(url, organizerId);
    const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
    log(`seeded in ${seedSeconds} s`);

    const adminToken = randomBytes(16).toString('hex');
    const config = loadAppConfig({
      DATABASE_URL: url,
      HOST: '127.0.0.1',
      PORT: '0',
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_TOKEN: adminToken,
      PUBLIC_WEB_URL: 'https://events.example.test',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'silent',
      // The benchmark measures serving, not the account's read budget.
      RATE_LIMIT_READS: '10000000',
    });
    const service = await startService(config, pino({ level: 'silent' }));
    try {
      const minted = await fetch(`${service.adminUrl}/internal/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ principal: { type: 'organiser', id: organizerId }, actorRole: 'owner' }),
      });
      if (minted.status !== 201) throw new Error(`minting a key failed: ${minted.status} ${await minted.text()}`);
      const { data } = (await minted.json()) as { data: { key: string } };
      const pageUrl = `${service.publicUrl}/v1/orders?limit=${LIMIT}`;
      const headers = { authorization: `Bearer ${data.key}` };

      const fetchPage = async (): Promise<number> => {
        const started = performance.now();
        const response = await fetch(pageUrl, { headers });
        const body = await response.text();
        const elapsed = performance.now() - started;
        if (response.status !== 200) throw new Error(`GET /v1/orders answered ${response.status}: ${body}`);
        return elapsed;
      };

      const first = await fetch(pageUrl, { headers });
      const page = (await first.json()) as { data: unknown[]; has_more: boolean };
      if (page.data.length !== LIMIT || !page.has_more) throw new Error('the first page is not a full page with more');
      for (let i = 0; i < WARM_UP; i += 1) await fetchPage();

      const timings: number[] = [];
      const started = performance.now();
      for (let i = 0; i < REQUESTS; i += 1) timings.push(await fetchPage());
      const totalSeconds = (performance.now() - started) / 1000;
      timings.sort((a, b) => a - b);
      const result: OrdersFirstPageResult = {
        benchmark: 'orders-first-page',
        orders: ORDERS,
        events: EVENTS,
        requests: REQUESTS,
        limit: LIMIT,
        seedSeconds,
        p50Ms: percentile(timings, 50),
        p95Ms: percentile(timings, 95),
        p99Ms: percentile(timings, 99),
        requestsPerSecond: Math.round((REQUESTS / totalSeconds) * 10) / 10,
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return result;
    } finally {
      await service.close();
    }
  } finally {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `orders benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  });
}
