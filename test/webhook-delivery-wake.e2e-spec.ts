import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { NotificationHub } from '../src/database/notifications/notification-hub';
import { DeliveryNotifications } from '../src/webhooks/delivery/delivery-notifications';
import { OutboxSenderId } from '../src/webhooks/outbox/outbox-sender-id';
import { DELIVERY_CHANNEL } from '../src/webhooks/delivery/delivery-queue.repository';
import { databaseClient } from './support/database-client';
import { freshDatabase } from './support/test-database';

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

async function eventually(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('waking the delivery worker by NOTIFY', () => {
  let db: Client;
  let hub: NotificationHub;
  let notifications: DeliveryNotifications;
  const sender = new OutboxSenderId();
  let wakes = 0;

  before(async () => {
    const url = await freshDatabase();
    db = await databaseClient(url);
    hub = new NotificationHub({ databaseUrl: url });
    notifications = new DeliveryNotifications(hub, sender);
    notifications.start(() => (wakes += 1));
    // The listener wakes once as soon as it listens (for what was written while it was not).
    await eventually(() => wakes === 1, 'the listener to connect');
  });
  after(async () => {
    await notifications.stop();
    await hub.onApplicationShutdown();
    await db.end();
  });

  it("ignores the echo of its own instance's outbox NOTIFY (that commit woke the worker in process)", async () => {
    await db.query(`SELECT pg_notify($1, $2)`, [DELIVERY_CHANNEL, sender.id]);
    // A NOTIFY from another instance, sent after the echo, proves the echo was delivered and passed over.
    await db.query(`SELECT pg_notify($1, $2)`, [DELIVERY_CHANNEL, new OutboxSenderId().id]);
    await eventually(() => wakes === 2, "another instance's notification");
    await sleep(100);
    assert.equal(wakes, 2);
  });

  it("wakes on another instance's outbox write and on an untagged NOTIFY (a recovery, the CLI)", async () => {
    const before = wakes;
    await db.query(`SELECT pg_notify($1, $2)`, [DELIVERY_CHANNEL, new OutboxSenderId().id]);
    await db.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
    await eventually(() => wakes === before + 2, 'two wakes');
  });
});
