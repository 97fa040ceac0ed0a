import assert from 'node:assert/strict';
import { generateApiKey } from '../libs/keys/api-key-format';
import { benchEnvironment, measure, runWhenExecuted } from './support/bench-environment';
import { seedEvents, seedOrganiser } from './support/bench-seed';

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
    await seedOrganiser(db, 'org_bench', key, ['events:read']);
    await seedEvents(db, 'org_bench', EVENTS);
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
