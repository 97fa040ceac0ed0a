import assert from 'node:assert/strict';
import { generateApiKey, hashApiKey } from '../libs/keys/api-key-format';
import { benchEnvironment, measure, runWhenExecuted } from './support/bench-environment';

const EVENTS = 100_000;
const LIMIT = 100;
const TARGET_PAGE = 1_000;

/**
 * First page against page 1,000 of 100,000 events (limit 100): keyset paging
 * should make them cost the same. Prints one JSON line.
 */
export async function main(): Promise<void> {
  const key = generateApiKey();
  const environment = await benchEnvironment(async (db) => {
    await db.query(`INSERT INTO organiser (id, name) VALUES ('org_bench', 'Bench')`);
    await db.query(
      `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role)
       VALUES ('key_bench', $1, 'svc_live_bench', 'organiser', 'org_bench', '{events:read}', 'owner')`,
      [hashApiKey(key)],
    );
    await db.query(
      `INSERT INTO event (id, organizer_id, title, visibility, start_time, updated_at)
       SELECT 'evt_' || lpad(to_hex(n), 24, '0'), 'org_bench', jsonb_build_object('EN', 'Event ' || n), 'draft',
              timestamptz '2027-01-01' + (n * interval '37 minutes'), timestamptz '2026-01-01' + (n * interval '1 second')
         FROM generate_series(1, ${EVENTS}) AS n`,
    );
  });
  try {
    const base = environment.service.publicUrl;
    const headers = { authorization: `Bearer ${key}` };
    const get = async (url: string): Promise<{ next_cursor: string | null; data: unknown[] }> => {
      const response = await fetch(url, { headers });
      assert.equal(response.status, 200);
      return (await response.json()) as { next_cursor: string | null; data: unknown[] };
    };
    let cursor: string | null = null;
    for (let page = 1; page < TARGET_PAGE; page += 1) {
      const body: { next_cursor: string | null } = await get(
        `${base}/v1/events?limit=${LIMIT}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      cursor = body.next_cursor;
    }
    assert.ok(cursor !== null);
    const deepUrl = `${base}/v1/events?limit=${LIMIT}&cursor=${encodeURIComponent(cursor)}`;
    assert.equal((await get(deepUrl)).data.length, LIMIT);
    const firstPage = await measure(500, 4, async () => void (await get(`${base}/v1/events?limit=${LIMIT}`)));
    const pageThousand = await measure(500, 4, async () => void (await get(deepUrl)));
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'events-paging', events: EVENTS, limit: LIMIT, firstPage, pageThousand })}\n`,
    );
  } finally {
    await environment.close();
  }
}

runWhenExecuted(module, main);
