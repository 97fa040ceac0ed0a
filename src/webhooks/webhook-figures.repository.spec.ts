import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { insertDelivery, insertSubscription, webhookTables } from '../../test/support/webhook-rows';
import type { WebhookTables } from '../../test/support/webhook-rows';
import { WebhookFiguresRepository } from './webhook-figures.repository';

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
});
