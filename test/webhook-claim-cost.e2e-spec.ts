import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { CLAIM_STATEMENTS } from '../src/webhooks/webhook-delivery.repository';
import { databaseClient } from './support/database-client';
import { freshDatabase } from './support/test-database';

interface PlanNode {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
}

/**
 * The claim runs on every wake of every instance's worker, so it must cost
 * the same whether a subscription has ten deliveries waiting or a day's worth
 * after an outage. Counted in buffer pages read (EXPLAIN ANALYZE BUFFERS),
 * which are exact, not in time. The backlog is bulk SQL: no API makes 20,000
 * deliveries wait.
 */
describe('webhook delivery claims', () => {
  let db: Client;
  const subscriptions = ['whk_claim_cost_a', 'whk_claim_cost_b'];

  before(async () => {
    db = await databaseClient(await freshDatabase());
    for (const id of subscriptions) {
      await db.query(
        `INSERT INTO webhook_subscription (id, principal_type, principal_id, url, events, secret_sealed)
         VALUES ($1, 'organiser', 'org_claim_cost', 'https://example.com/hook', '{order.confirmed}', 'sealed')`,
        [id],
      );
    }
  });

  after(async () => {
    await db.end();
  });

  /** Queues `count` more due deliveries for each subscription, the first three of each already leased. */
  async function queue(count: number, from: number): Promise<void> {
    await db.query(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at,
                                     lease_expires_at, lease_token)
       SELECT 'dlv_' || s.id || '_' || n, s.id, 'order.confirmed', 'ord_' || n, '\\x7b7d', now() - interval '1 minute',
              CASE WHEN n < 3 THEN now() + interval '1 minute' END, CASE WHEN n < 3 THEN 'held' END
         FROM unnest($1::text[]) AS s(id), generate_series($2::int, $2::int + $3::int - 1) AS n`,
      [subscriptions, from, count],
    );
    await db.query('VACUUM (ANALYZE) webhook_delivery');
  }

  /** Pages both claim statements read, run as a worker would (in a transaction, rolled back here). */
  async function pagesReadByClaim(): Promise<{ pages: number; claimed: number }> {
    const pagesOf = async (text: string, values: unknown[]): Promise<{ pages: number; rows: number }> => {
      const { rows } = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode & { 'Actual Rows': number } }> }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
        values,
      );
      const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
      assert.ok(plan !== undefined, 'EXPLAIN answered with a plan');
      return { pages: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'], rows: plan['Actual Rows'] };
    };
    await db.query('BEGIN');
    try {
      const chosen = await pagesOf(CLAIM_STATEMENTS.subscriptions.text, [64, 4]);
      const leased = await pagesOf(CLAIM_STATEMENTS.deliveries.text, [
        subscriptions,
        [false, false],
        4,
        64,
        30_000,
        't',
      ]);
      return { pages: chosen.pages + leased.pages, claimed: leased.rows };
    } finally {
      await db.query('ROLLBACK');
    }
  }

  it('reads about the same pages whatever the backlog: 200 or 20,000 deliveries waiting', async () => {
    await queue(100, 0);
    const small = await pagesReadByClaim();
    await queue(9_900, 100);
    const large = await pagesReadByClaim();
    // One more attempt per subscription fits under the cap of four (three are leased): the claim still works.
    assert.equal(small.claimed, 2);
    assert.equal(large.claimed, 2);
    // A hundred times the backlog; reading it would cost hundreds of pages more. A deeper index adds a few.
    assert.ok(
      large.pages <= small.pages * 1.5 + 10,
      `${small.pages} pages with 200 waiting, ${large.pages} with 20,000`,
    );
  });
});
