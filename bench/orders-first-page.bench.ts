import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '../libs/keys/api-key-format';
import { benchEnvironment, measure, runWhenExecuted } from './support/bench-environment';

/**
 * Latency of `GET /v1/orders` (first page, limit 50) for one organiser with
 * one million confirmed orders across 1,000 events, on the real service over
 * a throwaway embedded PostgreSQL. Prints one JSON line.
 */
const ORDERS = 1_000_000;
const EVENTS = 1_000;
const LIMIT = 50;
const ORGANISER = 'org_000000000000000000bench';

/** One organiser, its events and a million confirmed orders, all set-based, on one connection. */
async function seed(db: DataSource, key: string): Promise<void> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`INSERT INTO organiser (id, name) VALUES ($1, 'Benchmark Organiser')`, [ORGANISER]);
    await runner.query(
      `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role)
       VALUES ('key_bench', $1, 'svc_live_bench', 'organiser', $2, '{orders:read}', 'owner')`,
      [hashApiKey(key), ORGANISER],
    );
    await runner.query(
      `INSERT INTO event (id, organizer_id, visibility, start_time, title)
       SELECT 'evt_' || lpad(to_hex(g), 24, '0'), $1, 'public', now() + g * interval '1 hour', '{"EN": "Event"}'::jsonb
         FROM generate_series(1, $2::int) g`,
      [ORGANISER, EVENTS],
    );
    // Replica mode skips the per-row foreign-key checks of a bulk load whose references are right by construction.
    await runner.query(`SET session_replication_role = replica`);
    await runner.query(
      `INSERT INTO "order" (id, event_id, organizer_id, status, is_rsvp, quantity, total_amount_minor, currency,
                            billing_name, billing_email, attribution_source, created_at, updated_at)
       SELECT 'ord_' || lpad(to_hex(g), 24, '0'),
              'evt_' || lpad(to_hex(1 + g % $2::int), 24, '0'),
              $1, 'confirmed', g % 10 = 0, 1 + g % 4, 1000 * (1 + g % 4),
              (ARRAY['eur', 'EUR', NULL, 'Usd'])[1 + g % 4],
              'Buyer ' || g, 'buyer' || g || '@example.test', NULL,
              now() - g * interval '1 second', now() - (g % 86400) * interval '1 second'
         FROM generate_series(1, $3::int) g`,
      [ORGANISER, EVENTS, ORDERS],
    );
    await runner.query(`SET session_replication_role = origin`);
  } finally {
    await runner.release();
  }
}

export async function main(): Promise<void> {
  const key = generateApiKey();
  const seedStarted = performance.now();
  const environment = await benchEnvironment((db) => seed(db, key));
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  try {
    const pageUrl = `${environment.service.publicUrl}/v1/orders?limit=${LIMIT}`;
    const headers = { authorization: `Bearer ${key}` };
    const first = (await (await fetch(pageUrl, { headers })).json()) as { data: unknown[]; has_more: boolean };
    assert.ok(first.data.length === LIMIT && first.has_more, 'the first page is a full page with more');
    const firstPage = await measure(200, 1, async () => {
      const response = await fetch(pageUrl, { headers });
      await response.arrayBuffer();
      assert.equal(response.status, 200);
    });
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'orders-first-page', orders: ORDERS, events: EVENTS, limit: LIMIT, seedSeconds, firstPage })}\n`,
    );
  } finally {
    await environment.close();
  }
}

runWhenExecuted(module, main);
