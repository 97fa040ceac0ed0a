import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { insertDelivery, insertSubscription, webhookTables } from '../../test/support/webhook-rows';
import type { WebhookTables } from '../../test/support/webhook-rows';
import { FIGURES_STATEMENT, PENDING_COUNTED_UP_TO, WebhookFiguresRepository } from './webhook-figures.repository';

/** The figures monitoring reads, on real PostgreSQL. */
describe('WebhookFiguresRepository', () => {
  let tables: WebhookTables;
  let figures: WebhookFiguresRepository;

  before(async () => {
    tables = await webhookTables();
    figures = new WebhookFiguresRepository(tables.database);
  });
  after(async () => tables.dataSource.destroy());
  beforeEach(async () => {
    await tables.dataSource.query('TRUNCATE webhook_subscription, webhook_delivery CASCADE');
  });

  it('reads zero lag, nothing pending and nothing disabled from an empty outbox', async () => {
    assert.deepEqual(await figures.read(), { lagSeconds: 0, pending: 0, disabledSubscriptions: 0 });
  });

  it('counts every pending delivery and the live disabled subscriptions, not the deleted ones', async () => {
    const on = await insertSubscription(tables.dataSource);
    const off = await insertSubscription(tables.dataSource, { enabled: false });
    await insertSubscription(tables.dataSource, { enabled: false, deleted: true });
    await insertDelivery(tables.dataSource, { subscriptionId: on, dueInSeconds: 600 });
    await insertDelivery(tables.dataSource, { subscriptionId: off });
    await insertDelivery(tables.dataSource, { subscriptionId: on, status: 'succeeded' });
    const read = await figures.read();
    assert.equal(read.pending, 2);
    assert.equal(read.disabledSubscriptions, 1);
  });

  it('measures the lag from the oldest delivery the worker could send now, not one it may not send', async () => {
    const healthy = await insertSubscription(tables.dataSource);
    await insertDelivery(tables.dataSource, { subscriptionId: healthy, dueInSeconds: -30 });
    // Older, but of a disabled subscription, or behind a failing subscription's probe: not the worker's lag.
    await insertDelivery(tables.dataSource, {
      subscriptionId: await insertSubscription(tables.dataSource, { enabled: false }),
      dueInSeconds: -600,
    });
    const failing = await insertSubscription(tables.dataSource, { consecutiveFailures: 3 });
    await insertDelivery(tables.dataSource, { subscriptionId: failing, dueInSeconds: 600 });
    await insertDelivery(tables.dataSource, { subscriptionId: failing, dueInSeconds: -600 });
    const { lagSeconds } = await figures.read();
    assert.ok(lagSeconds >= 30 && lagSeconds < 60, `lag ${lagSeconds} s`);
  });

  it('reads about the same pages at 12,000 or 60,000 pending: counts up to 10,000, estimates above from the queue’s size', async () => {
    const subscriptions: string[] = [];
    for (let i = 0; i < 10; i += 1) subscriptions.push(await insertSubscription(tables.dataSource));
    const queue = async (from: number, to: number): Promise<void> => {
      await tables.dataSource.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, next_attempt_at)
         SELECT 'many_' || n || '_' || s.id, s.id, 'order.confirmed', 'ord_' || n, convert_to(repeat('x', 430), 'UTF8'),
                now() - interval '1 minute'
           FROM generate_series($2::int, $3::int) AS n, unnest($1::text[]) AS s(id)`,
        [subscriptions, from, to],
      );
      await tables.dataSource.query('ANALYZE webhook_delivery');
    };
    const pagesRead = async (): Promise<number> => {
      const [row] = await tables.dataSource.query<Array<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${FIGURES_STATEMENT.text}`,
      );
      const plan = row?.['QUERY PLAN'][0]?.Plan;
      assert.ok(plan !== undefined);
      return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
    };
    await queue(1, 1_200);
    const fewer = await pagesRead();
    const someMore = await figures.read();
    await queue(1_201, 6_000);
    const more = await pagesRead();
    const read = await figures.read();
    assert.ok(more <= fewer * 1.2 + 20, `${fewer} pages at 12,000 pending, ${more} at 60,000`);
    assert.ok(someMore.pending > PENDING_COUNTED_UP_TO && Math.abs(someMore.pending - 12_000) <= 12_000 * 0.25);
    assert.ok(Math.abs(read.pending - 60_000) <= 60_000 * 0.25, `${read.pending} estimated for 60,000`);
    assert.ok(read.lagSeconds >= 60 && read.lagSeconds < 120, `lag ${read.lagSeconds} s`);
  });
});
