import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertErrorBody } from './support/error-body';
import { fixtures } from './support/fixtures';
import type { Organiser, Venue } from './support/fixtures';
import type { publicApi } from './support/http-client';
import type { Client } from 'pg';
import type { TestService } from './support/test-service';
import { ORDER_FIELDS, ISO_MS, ordersTestContext } from './support/orders-test-context';
import { nth } from './support/defined';

describe('orders: who sees which orders, and the Order shape', () => {
  const context = ordersTestContext();
  const { insertEvent, createOrder, list, listIds } = context;
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let db: Client;
  let organiser: Organiser;
  let stranger: Organiser;
  let venue: Venue;
  before(() => {
    ({ service, api, db, organiser, stranger, venue } = context.state());
  });

  describe('visible set', () => {
    it('never returns pending, failed or abandoned orders, in either list', async () => {
      const eventId = await insertEvent(organiser.id);
      const confirmed = await createOrder(eventId, { status: 'confirmed' });
      const hidden = await Promise.all(
        ['pending', 'failed', 'abandoned'].map((status) => createOrder(eventId, { status })),
      );
      for (const path of ['/v1/orders?limit=100', `/v1/events/${eventId}/orders`]) {
        const ids = await listIds(path);
        assert.ok(ids.includes(confirmed.id), path);
        for (const order of hidden) assert.ok(!ids.includes(order.id), `${path} shows a ${order.status} order`);
      }
      const updatedAfter = `updated_after=${encodeURIComponent(confirmed.createdAt)}`;
      for (const path of [`/v1/orders?${updatedAfter}&limit=100`, `/v1/events/${eventId}/orders?${updatedAfter}`]) {
        assert.deepEqual(await listIds(path), [confirmed.id], path);
      }
    });

    it("never shows another organiser's orders in either list, and answers 404 for its event's orders", async () => {
      const mine = await insertEvent(organiser.id);
      const theirs = await insertEvent(stranger.id);
      const myOrder = await createOrder(mine, { status: 'confirmed' });
      const theirOrder = await createOrder(theirs, { status: 'confirmed' });

      const myIds = await listIds('/v1/orders?limit=100');
      assert.ok(myIds.includes(myOrder.id));
      assert.ok(!myIds.includes(theirOrder.id));
      assert.ok(!(await listIds(`/v1/orders?limit=100&updated_after=0`)).includes(theirOrder.id));
      assert.deepEqual(await listIds(`/v1/events/${mine}/orders`), [myOrder.id]);

      for (const path of [`/v1/events/${theirs}/orders`, `/v1/events/${theirs}/orders?updated_after=0`]) {
        assertErrorBody(await api('GET', path, { key: organiser.key }), 404, 'not_found');
      }
      assert.deepEqual(await listIds('/v1/orders', stranger.key), [theirOrder.id]);
    });

    it('answers 404 not_found for the orders of an event that does not exist', async () => {
      assertErrorBody(await api('GET', '/v1/events/evt_nothing/orders', { key: organiser.key }), 404, 'not_found');
    });

    it('answers 404, not invalid_cursor, for a foreign event whatever the cursor', async () => {
      const theirs = await insertEvent(stranger.id);
      const result = await api('GET', `/v1/events/${theirs}/orders?cursor=garbage`, { key: organiser.key });
      assertErrorBody(result, 404, 'not_found');
    });

    it('lists an owned event without confirmed orders as an empty page', async () => {
      const eventId = await insertEvent(organiser.id);
      await createOrder(eventId, { status: 'pending' });
      assert.deepEqual(await list(`/v1/events/${eventId}/orders`), { data: [], has_more: false, next_cursor: null });
    });

    it('refuses a venue key with 403 insufficient_scope on both lists', async () => {
      const eventId = await insertEvent(organiser.id);
      for (const path of ['/v1/orders', `/v1/events/${eventId}/orders`]) {
        assertErrorBody(await api('GET', path, { key: venue.key }), 403, 'insufficient_scope');
      }
    });

    it('refuses an organiser key without orders:read with 403 insufficient_scope', async () => {
      const key = await fixtures(service).key({ type: 'organiser', id: organiser.id }, ['events:read']);
      for (const path of ['/v1/orders', '/v1/events/evt_any/orders']) {
        assertErrorBody(await api('GET', path, { key }), 403, 'insufficient_scope');
      }
    });

    it('refuses a request without a key with 401 unauthorized', async () => {
      assertErrorBody(await api('GET', '/v1/orders'), 401, 'unauthorized');
    });

    it("takes an order out of its organiser's lists when its event is deleted", async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { status: 'confirmed' });
      await db.query(`DELETE FROM event WHERE id = $1`, [eventId]);
      assert.ok(!(await listIds('/v1/orders?limit=100')).includes(order.id));
      assert.ok(!(await listIds('/v1/orders?limit=100&updated_after=0')).includes(order.id));
      const stored = await db.query(`SELECT event_id, organizer_id FROM "order" WHERE id = $1`, [order.id]);
      assert.deepEqual(stored.rows, [{ event_id: null, organizer_id: null }], 'the order itself is kept');
    });

    it('moves orders with their event when the event changes owner, or loses it', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { status: 'confirmed' });
      await db.query(`UPDATE event SET organizer_id = $2 WHERE id = $1`, [eventId, stranger.id]);
      assert.ok(!(await listIds('/v1/orders?limit=100')).includes(order.id));
      assert.ok((await listIds('/v1/orders?limit=100', stranger.key)).includes(order.id));
      assert.deepEqual(await listIds(`/v1/events/${eventId}/orders`, stranger.key), [order.id]);

      const gone = await fixtures(service).organiser({ name: 'Leaving' });
      await db.query(`UPDATE event SET organizer_id = $2 WHERE id = $1`, [eventId, gone.id]);
      assert.deepEqual(await listIds('/v1/orders', gone.key), [order.id]);
      await db.query(`DELETE FROM organiser WHERE id = $1`, [gone.id]);
      const stored = await db.query(`SELECT organizer_id FROM "order" WHERE id = $1`, [order.id]);
      assert.deepEqual(stored.rows, [{ organizer_id: null }]);
    });
  });

  describe('the Order shape', () => {
    it('answers exactly the fields of the contract, with ISO 8601 UTC millisecond timestamps', async () => {
      const eventId = await insertEvent(organiser.id);
      const created = await createOrder(eventId, {
        status: 'confirmed',
        isRsvp: true,
        lineItems: [{ quantity: 2, unitAmountMinor: 0 }],
        totalAmountMinor: 0,
        currency: 'usd',
        billingName: 'Ada Lovelace',
        billingEmail: 'ada@example.test',
        attributionSource: 'newsletter',
        paymentProvider: 'stripe',
        organizerId: stranger.id,
      });
      const listed = nth((await list(`/v1/events/${eventId}/orders`)).data, 0, 'orders of the event');
      assert.deepEqual(Object.keys(listed), ORDER_FIELDS);
      assert.deepEqual(listed, created, 'the internal answer is the public shape');
      assert.deepEqual(
        { ...listed, id: undefined, createdAt: undefined, updatedAt: undefined },
        {
          id: undefined,
          eventId,
          status: 'confirmed',
          isRsvp: true,
          quantity: 2,
          totalAmountMinor: 0,
          currency: 'USD',
          billingName: 'Ada Lovelace',
          billingEmail: 'ada@example.test',
          attributionSource: 'newsletter',
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assert.match(listed.id, /^ord_[0-9a-f]{24}$/);
      assert.match(listed.createdAt, ISO_MS);
      assert.match(listed.updatedAt, ISO_MS);
    });

    it('outputs currency eur, Eur, empty and null as EUR', async () => {
      const eventId = await insertEvent(organiser.id);
      const created = await Promise.all(
        ['eur', 'Eur', '', null, undefined].map((currency) => createOrder(eventId, { status: 'confirmed', currency })),
      );
      for (const order of created) assert.equal(order.currency, 'EUR');
      const listed = (await list(`/v1/events/${eventId}/orders`)).data;
      assert.equal(listed.length, 5);
      for (const order of listed) assert.equal(order.currency, 'EUR');
      const stored = await db.query<{ currency: string | null }>(
        `SELECT currency FROM "order" WHERE event_id = $1 ORDER BY currency COLLATE "C" NULLS LAST`,
        [eventId],
      );
      assert.deepEqual(
        stored.rows.map((row) => row.currency),
        ['', 'Eur', 'eur', null, null],
        'stored as given',
      );
    });

    it('reports quantity as the sum over the line items', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, {
        status: 'confirmed',
        lineItems: [{ quantity: 2, unitAmountMinor: 1000 }, { quantity: 3 }, { quantity: 0, unitAmountMinor: null }],
        totalAmountMinor: 2000,
      });
      assert.equal(order.quantity, 5);
      assert.equal((await list(`/v1/events/${eventId}/orders`)).data[0]?.quantity, 5);
      const lines = await db.query(
        `SELECT position, quantity::int, unit_amount_minor::int FROM order_line_item WHERE order_id = $1 ORDER BY position`,
        [order.id],
      );
      assert.deepEqual(lines.rows, [
        { position: 0, quantity: 2, unit_amount_minor: 1000 },
        { position: 1, quantity: 3, unit_amount_minor: null },
        { position: 2, quantity: 0, unit_amount_minor: null },
      ]);
    });

    it('keeps money exact as integer minor units up to the largest safe integer', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { status: 'confirmed', totalAmountMinor: Number.MAX_SAFE_INTEGER });
      assert.equal(order.totalAmountMinor, Number.MAX_SAFE_INTEGER);
      const listed = await api('GET', `/v1/events/${eventId}/orders`, { key: organiser.key });
      assert.match(listed.text, /"totalAmountMinor":9007199254740991[,}]/);
    });

    it('keeps line items immutable', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId);
      await assert.rejects(
        db.query(`UPDATE order_line_item SET quantity = 9 WHERE order_id = $1`, [order.id]),
        /immutable/,
      );
    });
  });
});
