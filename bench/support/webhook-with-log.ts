import assert from 'node:assert/strict';
import { Client } from 'pg';
import type { BenchEnvironment } from './bench-environment';

/**
 * A subscription made through the public API (so its secret is sealed as in
 * production), then a long delivery log written directly: `deliveries` final
 * deliveries, one a minute back from now, with three attempts each. The page
 * benches (dashboard and portal) measure their webhook pages over it.
 */
export async function webhookWithLog(
  environment: BenchEnvironment,
  organiserId: string,
  deliveries: number,
): Promise<string> {
  const { adminToken, databaseUrl } = environment;
  const { publicUrl, adminUrl } = environment.service;
  if (adminUrl === null || publicUrl === null) throw new Error('the bench needs both listeners');
  const minted = await fetch(`${adminUrl}/internal/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      principal: { type: 'organiser', id: organiserId },
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
      [deliveries],
    );
    await db.query(
      `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, attempts, created_at, completed_at)
       SELECT 'dlv-' || g, $1, 'order.confirmed', 'ord_' || g, '{}'::bytea, (ARRAY['succeeded', 'failed', 'skipped'])[1 + g % 3], 3,
              now() - g * interval '1 minute', now() - g * interval '1 minute'
         FROM generate_series(1, $2::int) g`,
      [webhookId, deliveries],
    );
    await db.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms)
       SELECT 'dlv-' || g, now() - g * interval '1 minute' + a * interval '1 second', (ARRAY['500', 'timeout', '200'])[a], 40 + a
         FROM generate_series(1, $1::int) g, generate_series(1, 3) a`,
      [deliveries],
    );
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
  return webhookId;
}
