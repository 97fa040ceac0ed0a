import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { DashboardClient } from '../test/support/dashboard-client';
import { benchEnvironment, measure, runWhenExecuted, type LatencySummary } from './support/bench-environment';
import { webhookWithLog } from './support/webhook-with-log';

/**
 * Latency of every dashboard page for one organiser with 10,000 events and
 * 100,000 orders (all four statuses), signed in through the form, on the
 * real service over a throwaway embedded PostgreSQL. Each page is fetched
 * sequentially (one in flight); each figure has the round trip and the
 * server's own time (its `Server-Timing` header: arrival to rendered page). The webhook page is measured over a log of 5,000
 * deliveries. Prints one JSON line.
 */
const EVENTS = 10_000;
const ORDERS = 100_000;
const ORGANISER = 'org_000000000000000000bench';
const VENUE = 'ven_000000000000000000bench';
const REQUESTS = 100;
const DELIVERIES = 5_000;

async function seed(db: DataSource): Promise<void> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`INSERT INTO organiser (id, name) VALUES ($1, 'Benchmark Organiser')`, [ORGANISER]);
    await runner.query(
      `INSERT INTO organiser (id, name, created_at)
       SELECT 'org_' || lpad(to_hex(g), 24, '0'), 'Organiser ' || g, now() - g * interval '1 minute'
         FROM generate_series(1, 5000) g`,
    );
    await runner.query(`INSERT INTO venue (id, name) VALUES ($1, 'Benchmark Hall')`, [VENUE]);
    await runner.query(
      `INSERT INTO venue_location (id, venue_id, city, time_zone, created_at)
       SELECT 'loc_' || lpad(to_hex(g), 24, '0'), $1, 'City ' || g, 'Europe/Berlin', now() + g * interval '1 ms'
         FROM generate_series(1, 40) g`,
      [VENUE],
    );
    await runner.query(
      `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role)
       SELECT 'key_bench' || g, 'hash' || g, 'svc_live_b' || g, 'organiser', $1, '{events:read,orders:read}', 'owner'
         FROM generate_series(1, 10) g`,
      [ORGANISER],
    );
    await runner.query(
      `INSERT INTO event (id, organizer_id, visibility, start_time, title)
       SELECT 'evt_' || lpad(to_hex(g), 24, '0'), $1, (ARRAY['public', 'draft', 'unlisted'])[1 + g % 3],
              now() + g * interval '1 hour', '{"EN": "Event"}'::jsonb
         FROM generate_series(1, $2::int) g`,
      [ORGANISER, EVENTS],
    );
    // Replica mode skips the per-row foreign-key checks of a bulk load whose references are right by construction.
    await runner.query(`SET session_replication_role = replica`);
    await runner.query(
      `INSERT INTO "order" (id, event_id, organizer_id, status, is_rsvp, quantity, total_amount_minor, currency,
                            billing_name, billing_email, created_at, updated_at)
       SELECT 'ord_' || lpad(to_hex(g), 24, '0'), 'evt_' || lpad(to_hex(1 + g % $2::int), 24, '0'), $1,
              (ARRAY['confirmed', 'pending', 'failed', 'abandoned'])[1 + g % 4], false, 1 + g % 4, 1000 * (1 + g % 4),
              'eur', 'Buyer ' || g, 'buyer' || g || '@example.test',
              now() - g * interval '1 second', now() - g * interval '1 second'
         FROM generate_series(1, $3::int) g`,
      [ORGANISER, EVENTS, ORDERS],
    );
    await runner.query(`SET session_replication_role = origin`);
  } finally {
    await runner.release();
  }
}

/** The link the page offers to its next page. */
function nextHref(html: string): string {
  const match = /href="([^"]+)" rel="next"/.exec(html);
  if (match?.[1] === undefined) throw new Error('the page has no next link');
  return match[1].replace(/&amp;/g, '&');
}

export async function main(): Promise<void> {
  const seedStarted = performance.now();
  const environment = await benchEnvironment(seed, { WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  try {
    const adminUrl = environment.service.adminUrl;
    const publicUrl = environment.service.publicUrl;
    if (adminUrl === null || publicUrl === null) throw new Error('the bench needs both listeners');
    const webhookId = await webhookWithLog(environment, ORGANISER, DELIVERIES);
    const client = new DashboardClient(adminUrl);
    await client.signIn(environment.adminToken);
    const organiser = `/internal/dashboard/organisers/${ORGANISER}`;
    const events = await client.get(`${organiser}/events`);
    const orders = await client.get(`${organiser}/orders`);
    const pages: Record<string, string> = {
      'sign-in (signed out)': '/internal/dashboard/sign-in',
      accounts: '/internal/dashboard/accounts',
      'accounts search': '/internal/dashboard/accounts?q=Organiser%2042',
      organiser,
      venue: `/internal/dashboard/venues/${VENUE}`,
      'events page 1': `${organiser}/events`,
      'events page 2': nextHref(events.html),
      'orders page 1': `${organiser}/orders`,
      'orders page 2': nextHref(orders.html),
      [`webhook (${DELIVERIES} deliveries)`]: `/internal/dashboard/webhooks/${webhookId}`,
    };
    const figures: Record<string, LatencySummary & { serverP50Ms: number; serverP95Ms: number; serverP99Ms: number }> =
      {};
    for (const [name, path] of Object.entries(pages)) {
      const signedOut = name.startsWith('sign-in');
      const viewer = signedOut ? new DashboardClient(adminUrl) : client;
      const serverMs: number[] = [];
      const roundTrip = await measure(REQUESTS, 1, async () => {
        const page = await viewer.get(path);
        assert.equal(page.status, 200, `${name}: ${page.status}`);
        serverMs.push(Number(/page;dur=([\d.]+)/.exec(page.headers.get('server-timing') ?? '')?.[1]));
      });
      serverMs.sort((a, b) => a - b);
      const at = (q: number): number => serverMs[Math.min(serverMs.length - 1, Math.floor(q * serverMs.length))] ?? NaN;
      figures[name] = { ...roundTrip, serverP50Ms: at(0.5), serverP95Ms: at(0.95), serverP99Ms: at(0.99) };
    }
    const slowest = Math.max(...Object.values(figures).map((figure) => figure.serverP95Ms));
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'dashboard-pages', events: EVENTS, orders: ORDERS, seedSeconds, requestsPerPage: REQUESTS, slowestServerP95Ms: slowest, figures })}\n`,
    );
  } finally {
    await environment.close();
  }
}

runWhenExecuted(module, main);
