import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { Transaction } from '../src/database/unit-of-work';
import type { OrderConfirmedDomainEvent } from '../src/orders/domain-events/order-confirmed.domain-event';
import { assertErrorBody } from './support/error-body';
import type { Organiser } from './support/fixtures';
import type { internalApi } from './support/http-client';
import type { Client } from 'pg';
import type { TestService } from './support/test-service';
import { ORDER_FIELDS, ordersTestContext, type Order } from './support/orders-test-context';

describe('orders: confirmation, and what the webhooks context receives', () => {
  const context = ordersTestContext();
  const { emitted, insertEvent, createOrder, list, listIds, rowCounts, emissionsOf, commitsOf } = context;
  let service: TestService;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  before(() => {
    ({ service, admin, db, organiser } = context.state());
  });

  describe('confirmation', () => {
    it('confirming a pending order publishes order.confirmed once, with its event and organiser', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId);
      assert.equal(order.status, 'pending');
      assert.equal(emissionsOf(order.id), 0);
      const result = await admin('POST', `/internal/orders/${order.id}/confirm`);
      assert.equal(result.status, 200, result.text);
      assert.equal(result.body.data.status, 'confirmed');
      assert.deepEqual(Object.keys(result.body.data), ORDER_FIELDS);
      assert.equal(emissionsOf(order.id), 1);
      assert.equal(commitsOf(order.id), 1);
      const event = emitted.find((one) => one.orderId === order.id)!;
      assert.equal(event.type, 'order.confirmed');
      assert.equal(event.eventId, eventId);
      assert.equal(event.organizerId, organiser.id);
      assert.ok(event.occurredAt instanceof Date);
      assert.ok((await listIds(`/v1/events/${eventId}/orders`)).includes(order.id));
    });

    it('concurrent confirmations of one order publish once', async () => {
      const eventId = await insertEvent(organiser.id);
      const orders = await Promise.all([1, 2, 3].map(() => createOrder(eventId)));
      for (const order of orders) {
        const results = await Promise.all(
          Array.from({ length: 8 }, () => admin('POST', `/internal/orders/${order.id}/confirm`)),
        );
        for (const result of results) {
          assert.equal(result.status, 200, result.text);
          assert.equal(result.body.data.status, 'confirmed');
        }
        assert.equal(emissionsOf(order.id), 1);
        assert.equal(commitsOf(order.id), 1);
      }
    });

    it('confirming an order already confirmed changes nothing and publishes nothing', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId);
      const first = await admin('POST', `/internal/orders/${order.id}/confirm`);
      const again = await admin('POST', `/internal/orders/${order.id}/confirm`);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body.data, first.body.data, 'not even updatedAt moves');
      assert.equal(emissionsOf(order.id), 1);
    });

    it('an order created as confirmed publishes once, and confirming it later publishes nothing', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { status: 'confirmed' });
      assert.equal(emissionsOf(order.id), 1);
      assert.equal(commitsOf(order.id), 1);
      assert.equal(emitted.find((one) => one.orderId === order.id)!.organizerId, organiser.id);
      await admin('POST', `/internal/orders/${order.id}/confirm`);
      assert.equal(emissionsOf(order.id), 1);
    });

    it('orders created pending, failed or abandoned publish nothing', async () => {
      const eventId = await insertEvent(organiser.id);
      for (const status of ['pending', 'failed', 'abandoned']) {
        const order = await createOrder(eventId, { status });
        assert.equal(emissionsOf(order.id), 0, status);
      }
    });

    it('PATCH rewrites a confirmed order, moves updatedAt and publishes nothing', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { status: 'confirmed', billingName: 'Old', billingEmail: 'old@x.test' });
      const result = await admin('PATCH', `/internal/orders/${order.id}`, {
        body: { billingName: 'New Name', attributionSource: 'partner', status: 'pending', totalAmountMinor: 1 },
      });
      assert.equal(result.status, 200, result.text);
      const rewritten = result.body.data as Order;
      assert.equal(rewritten.billingName, 'New Name');
      assert.equal(rewritten.billingEmail, 'old@x.test', 'fields not given are kept');
      assert.equal(rewritten.attributionSource, 'partner');
      assert.equal(rewritten.status, 'confirmed', 'status is not writable here');
      assert.equal(rewritten.totalAmountMinor, 1500, 'money is not writable here');
      assert.ok(rewritten.updatedAt > order.updatedAt, 'updatedAt moves');
      assert.equal(rewritten.createdAt, order.createdAt);
      assert.equal(emissionsOf(order.id), 1);

      const cleared = await admin('PATCH', `/internal/orders/${order.id}`, { body: { billingEmail: null } });
      assert.equal(cleared.body.data.billingEmail, null);
      assert.ok(cleared.body.data.updatedAt > rewritten.updatedAt);
      assert.equal(emissionsOf(order.id), 1);
      assert.deepEqual((await list(`/v1/events/${eventId}/orders`)).data, [cleared.body.data]);
    });

    it('refuses to confirm a failed or abandoned order with 409 conflict', async () => {
      const eventId = await insertEvent(organiser.id);
      for (const status of ['failed', 'abandoned']) {
        const order = await createOrder(eventId, { status });
        assertErrorBody(await admin('POST', `/internal/orders/${order.id}/confirm`), 409, 'conflict');
        const stored = await db.query(`SELECT status FROM "order" WHERE id = $1`, [order.id]);
        assert.deepEqual(stored.rows, [{ status }]);
        assert.equal(emissionsOf(order.id), 0);
      }
    });

    it('answers 404 not_found for an unknown order id on confirm, PATCH and DELETE', async () => {
      const unknown = 'ord_000000000000000000000000';
      assertErrorBody(await admin('POST', `/internal/orders/${unknown}/confirm`), 404, 'not_found');
      assertErrorBody(
        await admin('PATCH', `/internal/orders/${unknown}`, { body: { billingName: 'x' } }),
        404,
        'not_found',
      );
      assertErrorBody(await admin('DELETE', `/internal/orders/${unknown}`), 404, 'not_found');
    });

    it('rolls the confirmation back when an in-transaction listener fails', async () => {
      const emitter = service.running.app.get(EventEmitter2);
      const failing = (): never => {
        throw new Error('listener failure for the test');
      };
      const eventId = await insertEvent(organiser.id);
      const pending = await createOrder(eventId);
      const before = await rowCounts();
      emitter.on('order.confirmed', failing);
      try {
        assertErrorBody(await admin('POST', `/internal/orders/${pending.id}/confirm`), 500, 'internal');
        assertErrorBody(
          await admin('POST', '/internal/orders', {
            body: { eventId, status: 'confirmed', lineItems: [{ quantity: 1 }], totalAmountMinor: 100 },
          }),
          500,
          'internal',
        );
      } finally {
        emitter.off('order.confirmed', failing);
      }
      const stored = await db.query(`SELECT status FROM "order" WHERE id = $1`, [pending.id]);
      assert.deepEqual(stored.rows, [{ status: 'pending' }]);
      assert.deepEqual(await rowCounts(), before, 'the order created confirmed left no row behind');
      assert.equal(commitsOf(pending.id), 0);
      const retried = await admin('POST', `/internal/orders/${pending.id}/confirm`);
      assert.equal(retried.body.data.status, 'confirmed');
      assert.equal(commitsOf(pending.id), 1);
    });

    it('deletes an order for good', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { status: 'confirmed', lineItems: [{ quantity: 1 }, { quantity: 2 }] });
      const result = await admin('DELETE', `/internal/orders/${order.id}`);
      assert.equal(result.status, 200, result.text);
      assert.deepEqual(result.body, { data: { id: order.id, deleted: true } });
      assert.deepEqual(await listIds(`/v1/events/${eventId}/orders`), []);
      const left = await db.query(
        `SELECT (SELECT count(*) FROM "order" WHERE id = $1)::int AS orders,
                (SELECT count(*) FROM order_line_item WHERE order_id = $1)::int AS lines`,
        [order.id],
      );
      assert.deepEqual(left.rows, [{ orders: 0, lines: 0 }]);
      assertErrorBody(await admin('DELETE', `/internal/orders/${order.id}`), 404, 'not_found');
    });
  });

  describe('for the webhooks context', () => {
    const dataOf = (orderId: string): unknown => emitted.find((event) => event.orderId === orderId)?.data;

    it('order.confirmed carries the webhook data of the confirmed order, in integer minor units with currency normalised', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, {
        lineItems: [
          { quantity: 2, unitAmountMinor: 1250 },
          { quantity: 1, unitAmountMinor: 1 },
        ],
        totalAmountMinor: 2501,
        currency: 'eur',
        isRsvp: false,
        billingName: 'Grace',
        billingEmail: 'grace@example.test',
        paymentProvider: 'adyen',
      });
      assert.equal((await admin('POST', `/internal/orders/${order.id}/confirm`)).status, 200);
      assert.deepEqual(dataOf(order.id), {
        orderId: order.id,
        eventId,
        totalAmount: 2501,
        currency: 'EUR',
        isRsvp: false,
        quantity: 3,
        billingName: 'Grace',
        billingEmail: 'grace@example.test',
        paymentProvider: 'adyen',
      });
      const nullCurrency = await createOrder(eventId, { currency: null, status: 'confirmed' });
      assert.equal((dataOf(nullCurrency.id) as { currency: string }).currency, 'EUR');
      assertErrorBody(await admin('POST', '/internal/orders/ord_missing/confirm'), 404, 'not_found');
      assert.equal(emissionsOf('ord_missing'), 0);
    });

    it('order.confirmed carries the confirmation as its own transaction made it', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { totalAmountMinor: 999 });
      const emitter = service.running.app.get(EventEmitter2);
      const seen: unknown[] = [];
      const listener = (event: OrderConfirmedDomainEvent, _tx: Transaction): void => {
        if (event.orderId === order.id) seen.push(event.data);
      };
      emitter.on('order.confirmed', listener);
      try {
        await admin('POST', `/internal/orders/${order.id}/confirm`);
      } finally {
        emitter.off('order.confirmed', listener);
      }
      assert.equal(seen.length, 1);
      assert.equal((seen[0] as { totalAmount: number }).totalAmount, 999);
    });
  });
});
