import type { DataSource } from 'typeorm';
import { hashApiKey } from '../../libs/keys/api-key-format';

/**
 * Set-based seeds shared by the benchmarks: each is one `generate_series`
 * statement, so a million rows take seconds. Ids are `<prefix>_` plus the
 * row number in 24 hex digits, so a row's id can be computed from its number.
 */
type Queryable = Pick<DataSource, 'query'>;

/** The id of row `n` (1-based) of a seeded table, as the seeds write it. */
export function seededId(prefix: 'evt' | 'ord', n: number): string {
  return `${prefix}_${n.toString(16).padStart(24, '0')}`;
}

/** An organiser and one API key of it with the given scopes. */
export async function seedOrganiser(db: Queryable, organiserId: string, key: string, scopes: string[]): Promise<void> {
  await db.query(`INSERT INTO organiser (id, name) VALUES ($1, 'Bench organiser')`, [organiserId]);
  await db.query(
    `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role)
     VALUES ('key_' || $2, $1, 'svc_live_bench', 'organiser', $2, $3, 'owner')`,
    [hashApiKey(key), organiserId, scopes],
  );
}

/**
 * `count` draft events of one organiser: event n starts at 2027-01-01 plus
 * n × 37 minutes and was last updated at 2026-01-01 plus n seconds, so both
 * orderings are strictly monotonic in n.
 */
export async function seedEvents(db: Queryable, organiserId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO event (id, organizer_id, title, visibility, start_time, created_at, updated_at)
     SELECT 'evt_' || lpad(to_hex(n), 24, '0'), $1, jsonb_build_object('EN', 'Event ' || n), 'draft',
            timestamptz '2027-01-01' + (n * interval '37 minutes'),
            timestamptz '2026-01-01' + (n * interval '1 second'), timestamptz '2026-01-01' + (n * interval '1 second')
       FROM generate_series(1, $2::int) AS n`,
    [organiserId, count],
  );
}

/**
 * `count` confirmed orders of one organiser spread over its seeded events
 * 1..`events` (mixed currency spellings, some RSVPs). Order n was created n
 * seconds before now. Runs on one connection in replica mode, which skips
 * the per-row foreign-key checks of a bulk load whose references are right
 * by construction.
 */
export async function seedOrders(db: DataSource, organiserId: string, events: number, count: number): Promise<void> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
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
      [organiserId, events, count],
    );
    await runner.query(`SET session_replication_role = origin`);
  } finally {
    await runner.release();
  }
}
