import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Client, type Notification } from 'pg';
import { deliveryRow, insertDelivery, insertSubscription, webhookTables } from '../../../test/support/webhook-rows';
import type { WebhookTables } from '../../../test/support/webhook-rows';
import { OutboxSenderId } from '../outbox/outbox-sender-id';
import { DELIVERY_CHANNEL, DeliveryQueueRepository } from './delivery-queue.repository';

/** The outbox's side of the queue on real PostgreSQL: every statement of DeliveryQueueRepository. */
describe('DeliveryQueueRepository', () => {
  let tables: WebhookTables;
  let queue: DeliveryQueueRepository;
  const sender = new OutboxSenderId();

  before(async () => {
    tables = await webhookTables();
    queue = new DeliveryQueueRepository(sender);
  });
  after(async () => tables.dataSource.destroy());
  beforeEach(async () => {
    await tables.dataSource.query(
      'TRUNCATE webhook_subscription, webhook_delivery, webhook_delivery_history, webhook_delivery_attempt CASCADE',
    );
  });

  /** Today's UTC day as a partition suffix (YYYYMMDD). */
  const today = (): string => new Date().toISOString().slice(0, 10).replaceAll('-', '');

  it('enqueues pending and skipped deliveries once per fact, and wakes the workers at commit only for pending ones', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const listener = new Client({ connectionString: tables.url });
    await listener.connect();
    const heard: Notification[] = [];
    listener.on('notification', (notification) => heard.push(notification));
    await listener.query(`LISTEN ${DELIVERY_CHANNEL}`);
    try {
      const row = (id: string, status: 'pending' | 'skipped') => ({
        id,
        subscriptionId,
        eventType: 'order.confirmed' as const,
        subjectId: `ord_${status}`,
        payload: Buffer.from('{}'),
        traceId: 'trace',
        status,
      });
      const inserted = await tables.unitOfWork.run((tx) => queue.enqueue([row(randomUUID(), 'pending')], tx));
      assert.equal(inserted, 1);
      const again = await tables.unitOfWork.run((tx) => queue.enqueue([row(randomUUID(), 'pending')], tx));
      assert.equal(again, 0, 'the same fact for the same subscription is not queued twice');
      const skipped = await tables.unitOfWork.run((tx) => queue.enqueue([row(randomUUID(), 'skipped')], tx));
      assert.equal(skipped, 0, 'a skipped delivery is recorded but counts as nothing to send');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(
        heard.map((n) => n.payload),
        [sender.id],
        'one wake-up, signed by this instance',
      );
      const statuses: Array<{ status: string; due: boolean; completed: boolean }> = await tables.dataSource.query(
        `SELECT status, due, completed FROM (
           SELECT seq, status, next_attempt_at IS NOT NULL AS due, false AS completed FROM webhook_delivery
           UNION ALL
           SELECT seq, status, false, completed_at IS NOT NULL FROM webhook_delivery_history) AS d
          ORDER BY seq`,
      );
      assert.deepEqual(statuses, [
        { status: 'pending', due: true, completed: false },
        { status: 'skipped', due: false, completed: true },
      ]);
    } finally {
      await listener.end();
    }
  });

  it('enqueues nothing, and inserts nothing, in a transaction that rolls back', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    await assert.rejects(
      tables.unitOfWork.run(async (tx) => {
        await queue.enqueue(
          [
            {
              id: randomUUID(),
              subscriptionId,
              eventType: 'order.confirmed',
              subjectId: 'ord_rolled_back',
              payload: Buffer.from('{}'),
              traceId: 'trace',
              status: 'pending',
            },
          ],
          tx,
        );
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await tables.dataSource.query('SELECT id FROM webhook_delivery'), []);
  });

  it('drops a deleted subscription’s pending deliveries, but leaves a leased one to finish', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource);
    const waiting = await insertDelivery(tables.dataSource, { subscriptionId });
    const inFlight = await insertDelivery(tables.dataSource, { subscriptionId, leasedBy: 'worker' });
    const other = await insertDelivery(tables.dataSource, {
      subscriptionId: await insertSubscription(tables.dataSource),
    });
    await tables.unitOfWork.run((tx) => queue.dropPending(subscriptionId, tx));
    assert.equal((await deliveryRow(tables.dataSource, waiting))?.status, 'dropped');
    assert.equal((await deliveryRow(tables.dataSource, inFlight))?.status, 'pending');
    assert.equal((await deliveryRow(tables.dataSource, other))?.status, 'pending');
  });

  it('drops what a deleted subscription still has waiting unleased (an attempt given back at the deletion), never a leased one or a live subscription’s', async () => {
    const deleted = await insertSubscription(tables.dataSource, { deleted: true });
    const live = await insertSubscription(tables.dataSource);
    const givenBack = await insertDelivery(tables.dataSource, { subscriptionId: deleted });
    const inFlight = await insertDelivery(tables.dataSource, { subscriptionId: deleted, leasedBy: 'worker' });
    const waiting = await insertDelivery(tables.dataSource, { subscriptionId: live });
    assert.equal(await tables.unitOfWork.run((tx) => queue.dropOrphaned(10, tx)), 1);
    assert.equal((await deliveryRow(tables.dataSource, givenBack))?.status, 'dropped');
    assert.equal((await deliveryRow(tables.dataSource, inFlight))?.status, 'pending');
    assert.equal((await deliveryRow(tables.dataSource, waiting))?.status, 'pending');
  });

  it('makes today’s partition before a publication writes a skipped delivery into it, so the publication never fails for want of one', async () => {
    const subscriptionId = await insertSubscription(tables.dataSource, { enabled: false });
    for (const parent of ['webhook_delivery_history', 'webhook_delivery_attempt']) {
      await tables.dataSource.query(`ALTER TABLE ${parent} DETACH PARTITION ${parent}_d${today()}`);
      await tables.dataSource.query(`DROP TABLE ${parent}_d${today()}`);
    }
    const id = randomUUID();
    await tables.unitOfWork.run((tx) =>
      queue.enqueue(
        [
          {
            id,
            subscriptionId,
            eventType: 'order.confirmed',
            subjectId: 'ord_skipped_today',
            payload: Buffer.from('{}'),
            traceId: 'trace',
            status: 'skipped',
          },
        ],
        tx,
      ),
    );
    const [row] = await tables.dataSource.query(
      `SELECT tableoid::regclass::text AS partition, status FROM webhook_delivery_history WHERE id = $1`,
      [id],
    );
    assert.deepEqual(row, { partition: `webhook_delivery_history_d${today()}`, status: 'skipped' });
  });
});
