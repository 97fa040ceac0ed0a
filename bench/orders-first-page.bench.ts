import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { generateApiKey } from '../libs/keys/api-key-format';
import { benchEnvironment, measure, runWhenExecuted } from './support/bench-environment';
import { seedEvents, seedOrders, seedOrganiser } from './support/bench-seed';

/**
 * Latency of `GET /v1/orders` (first page, limit 50) for one organiser with
 * one million confirmed orders across 1,000 events, on the real service over
 * a throwaway embedded PostgreSQL. Prints one JSON line.
 */
const ORDERS = 1_000_000;
const EVENTS = 1_000;
const LIMIT = 50;
const ORGANISER = 'org_000000000000000000bench';

/** One organiser, its events and a million confirmed orders, all set-based. */
async function seed(db: DataSource, key: string): Promise<void> {
  await seedOrganiser(db, ORGANISER, key, ['orders:read']);
  await seedEvents(db, ORGANISER, EVENTS);
  await seedOrders(db, ORGANISER, EVENTS, ORDERS);
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
