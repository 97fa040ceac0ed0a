import { EventEmitter2 } from '@nestjs/event-emitter';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { Transaction } from '../src/database/unit-of-work';
import { newResourceId } from '../libs/ids/resource-id';
import type { OrderConfirmedDomainEvent } from '../src/orders/domain-events/order-confirmed.domain-event';
import { OrdersService } from '../src/orders/orders.service';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startTestService, type TestService } from './support/test-service';

/** The Order of api-v1.md, in the contract's order. */
const ORDER_FIELDS = [
  'id',
  'eventId',
  'status',
  'isRsvp',
  'quantity',
  'totalAmountMinor',
  'currency',
  'billingName',
  'billingEmail',
  'attributionSource',
  'createdAt',
  'updatedAt',
];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Order {
  id: string;
  eventId: string | null;
  status: string;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

interface ListPage {
  data: Order[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Runs `work` over `items`, `size` at a time. */
async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await Promise.all(items.slice(start, start + size).map(work))));
  }
  return results;
}

function byCreatedDesc(a: Order, b: Order): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : -1;
}

function byUpdatedAsc(a: Order, b: Order): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? -1 : 1;
  return a.id < b.id ? -1 : 1;
}

describe('orders', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  let stranger: Organiser;
  let venue: Venue;
  const emitted: OrderConfirmedDomainEvent[] = [];
  const committed: OrderConfirmedDomainEvent[] = [];

  /** Events come straight from SQL: the events context builds its own API concurrently. */
  async function insertEvent(organizerId: string | null): Promise<string> {
    const id = newResourceId('evt');
    await db.query(
      `INSERT INTO event (id, organizer_id, visibility, start_time, title) VALUES ($1, $2, 'draft', now(), $3)`,
      [id, organizerId, JSON.stringify({ EN: 'Orders test event' })],
    );
    return id;
  }

  async function createOrder(eventId: string, fields: Record<string, unknown> = {}): Promise<Order> {
    const result = await admin('POST', '/internal/orders', {
      body: { eventId, lineItems: [{ quantity: 1, unitAmountMinor: 1500 }], totalAmountMinor: 1500, ...fields },
    });
    assert.equal(result.status, 201, result.text);
    return result.body.data as Order;
  }

  async function list(path: string, key = organiser.key): Promise<ListPage> {
    const result = await api('GET', path, { key });
    assert.equal(result.status, 200, result.text);
    return result.body as ListPage;
  }

  async function listIds(path: string, key = organiser.key): Promise<string[]> {
    return (await list(path, key)).data.map((order) => order.id);
  }

  /** Follows next_cursor to the end, checking the envelope rules on every page. */
  async function walk(path: string, limit: number, query: Record<string, string> = {}): Promise<Order[]> {
    const seen: Order[] = [];
    let cursor: string | null = null;
    for (let pages = 0; ; pages += 1) {
      assert.ok(pages < 1000, 'paging does not end');
      const params = new URLSearchParams({ ...query, limit: String(limit) });
      if (cursor !== null) params.set('cursor', cursor);
      const page = await list(`${path}?${params.toString()}`);
      assert.equal(page.next_cursor === null, !page.has_more, 'next_cursor is null exactly when has_more is false');
      seen.push(...page.data);
      if (!page.has_more) {
        assert.ok(page.data.length <= limit);
        return seen;
      }
      assert.equal(page.data.length, limit, 'every page but the last is full');
      cursor = page.next_cursor;
    }
  }

  async function rowCounts(): Promise<{ orders: number; lineItems: number }> {
    const result = await db.query<{ orders: string; line_items: string }>(
      `SELECT (SELECT count(*) FROM "order") AS orders, (SELECT count(*) FROM order_line_item) AS line_items`,
    );
    const row = result.rows[0];
    return { orders: Number(row.orders), lineItems: Number(row.line_items) };
  }

  const emissionsOf = (orderId: string): number => emitted.filter((event) => event.orderId === orderId).length;
  const commitsOf = (orderId: string): number => committed.filter((event) => event.orderId === orderId).length;

  before(async () => {
    service = await startTestService({ RATE_LIMIT_READS: '100000', RATE_LIMIT_WRITES: '100000' });
    api = publicApi(service);
    admin = internalApi(service);
    db = new Client({ connectionString: service.databaseUrl });
    await db.connect();
    organiser = await fixtures(service).organiser({ name: 'Owner' });
    stranger = await fixtures(service).organiser({ name: 'Stranger' });
    venue = await fixtures(service).venue();
    const emitter = service.running.app.get(EventEmitter2);
    emitter.on('order.confirmed', (event: OrderConfirmedDomainEvent) => {
      emitted.push(event);
    });
    emitter.on('order.confirmed.committed', (event: OrderConfirmedDomainEvent) => {
      committed.push(event);
    });
  });

  after(async () => {
    await db.end();
    await service.close();
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
      const listed = (await list(`/v1/events/${eventId}/orders`)).data[0];
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
      assert.equal((await list(`/v1/events/${eventId}/orders`)).data[0].quantity, 5);
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

  describe('paging', () => {
    let eventId: string;
    let everyConfirmed: Order[];
    let eventConfirmed: Order[];

    before(async () => {
      eventId = await insertEvent(organiser.id);
      const otherEvent = await insertEvent(organiser.id);
      const foreignEvent = await insertEvent(stranger.id);
      const specs = [
        ...Array.from({ length: 250 }, () => ({ eventId, status: 'confirmed' })),
        ...Array.from({ length: 20 }, () => ({ eventId: otherEvent, status: 'confirmed' })),
        ...['pending', 'failed', 'abandoned'].flatMap((status) =>
          Array.from({ length: 10 }, () => ({ eventId, status })),
        ),
        ...Array.from({ length: 10 }, () => ({ eventId: foreignEvent, status: 'confirmed' })),
      ];
      await inBatches(specs, 16, (spec) => createOrder(spec.eventId, { status: spec.status }));
      // Crowd the orders into few distinct instants, so most of them tie and the id tie-breaker is exercised.
      await db.query(
        `UPDATE "order" SET created_at = timestamptz '2031-05-01T10:00:00Z' + (floor(random() * 40)::int) * interval '1 second',
                            updated_at = timestamptz '2031-06-01T10:00:00Z' + (floor(random() * 40)::int) * interval '1 second'
          WHERE event_id IN ($1, $2, $3)`,
        [eventId, otherEvent, foreignEvent],
      );
      const stored = await db.query<Order & { organizer_id: string }>(
        `SELECT id, event_id AS "eventId", status, organizer_id,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
                to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"
           FROM "order" WHERE event_id IN ($1, $2)`,
        [eventId, otherEvent],
      );
      everyConfirmed = stored.rows.filter((order) => order.status === 'confirmed');
      eventConfirmed = everyConfirmed.filter((order) => order.eventId === eventId);
      assert.equal(everyConfirmed.length, 270);
      assert.equal(eventConfirmed.length, 250);
    });

    const idsOf = (orders: Order[]): string[] => orders.map((order) => order.id);

    it('walks 250 orders by createdAt descending with limits 100, 7 and 50, each exactly once, in order', async () => {
      const expected = idsOf([...eventConfirmed].sort(byCreatedDesc));
      for (const limit of [100, 7, 50]) {
        const walked = await walk(`/v1/events/${eventId}/orders`, limit);
        assert.deepEqual(idsOf(walked), expected, `limit ${limit}`);
      }
    });

    it('walks every confirmed order of the organiser by createdAt descending across its events', async () => {
      const expected = idsOf([...everyConfirmed].sort(byCreatedDesc));
      for (const limit of [100, 7]) {
        const walked = await walk('/v1/orders', limit);
        // Orders made by earlier tests sit outside the crowded instants: compare this suite's orders only.
        const mine = new Set(expected);
        assert.deepEqual(
          idsOf(walked).filter((id) => mine.has(id)),
          expected,
          `limit ${limit}`,
        );
        assert.equal(new Set(idsOf(walked)).size, walked.length, 'no order twice');
        const sorted = [...walked].sort(byCreatedDesc);
        assert.deepEqual(idsOf(walked), idsOf(sorted), 'createdAt descending, then id descending');
      }
    });

    it('walks by updatedAt ascending with updated_after, inclusive of the instant itself', async () => {
      const ordered = [...eventConfirmed].sort(byUpdatedAsc);
      const instant = ordered[Math.floor(ordered.length / 2)].updatedAt;
      const expected = idsOf(ordered.filter((order) => order.updatedAt >= instant));
      assert.ok(expected.length < ordered.length, 'the instant cuts the list');
      for (const limit of [100, 7]) {
        const walked = await walk(`/v1/events/${eventId}/orders`, limit, { updated_after: instant });
        assert.deepEqual(idsOf(walked), expected, `limit ${limit}`);
        assert.equal(walked[0].updatedAt, instant, 'an order updated exactly at the instant is included');
      }
      const epochMs = String(Date.parse(instant));
      assert.deepEqual(idsOf(await walk(`/v1/events/${eventId}/orders`, 100, { updated_after: epochMs })), expected);

      const across = [...everyConfirmed].sort(byUpdatedAsc).filter((order) => order.updatedAt >= instant);
      for (const limit of [100, 7]) {
        // Every other order of the organiser was updated before 2031, so this list is exactly this suite's.
        assert.deepEqual(idsOf(await walk('/v1/orders', limit, { updated_after: instant })), idsOf(across));
      }
    });

    it('includes an order whose updatedAt equals updated_after and excludes it one millisecond later', async () => {
      const order = eventConfirmed[0];
      const at = await listIds(`/v1/events/${eventId}/orders?limit=100&updated_after=${order.updatedAt}`);
      assert.ok(at.includes(order.id));
      const later = new Date(Date.parse(order.updatedAt) + 1).toISOString();
      assert.ok(!(await listIds(`/v1/events/${eventId}/orders?limit=100&updated_after=${later}`)).includes(order.id));
    });

    it('clamps a limit above 100 and reads a bad limit as 50', async () => {
      assert.equal((await list(`/v1/events/${eventId}/orders?limit=1000`)).data.length, 100);
      for (const limit of ['0', '-3', 'ten', '']) {
        assert.equal((await list(`/v1/events/${eventId}/orders?limit=${limit}`)).data.length, 50, limit);
      }
    });

    it('refuses an unknown query parameter with 400 unsupported_parameter', async () => {
      for (const path of ['/v1/orders?status=pending', `/v1/events/${eventId}/orders?sort=asc`]) {
        const result = await api('GET', path, { key: organiser.key });
        assertErrorBody(result, 400, 'unsupported_parameter');
      }
    });

    it('refuses an unparseable updated_after with 400 invalid_argument', async () => {
      for (const path of [
        '/v1/orders?updated_after=yesterday',
        `/v1/events/${eventId}/orders?updated_after=2031-13-01`,
      ]) {
        assertErrorBody(await api('GET', path, { key: organiser.key }), 400, 'invalid_argument');
      }
    });

    it('refuses a malformed or tampered cursor with 400 invalid_cursor', async () => {
      const cursor = (await list(`/v1/events/${eventId}/orders?limit=5`)).next_cursor!;
      const tampered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
      for (const bad of ['garbage', 'a.b', tampered, cursor.slice(0, -1), cursor.slice(1)]) {
        for (const path of ['/v1/orders', `/v1/events/${eventId}/orders`]) {
          const result = await api('GET', `${path}?cursor=${encodeURIComponent(bad)}`, { key: organiser.key });
          assertErrorBody(result, 400, 'invalid_cursor');
        }
      }
    });

    it('refuses a cursor from another ordering or another list with 400 invalid_cursor', async () => {
      const byCreated = (await list(`/v1/events/${eventId}/orders?limit=5`)).next_cursor!;
      const byUpdated = (await list(`/v1/events/${eventId}/orders?limit=5&updated_after=0`)).next_cursor!;
      const organiserWide = (await list('/v1/orders?limit=5')).next_cursor!;
      const refused = [
        `/v1/events/${eventId}/orders?updated_after=0&cursor=${encodeURIComponent(byCreated)}`,
        `/v1/events/${eventId}/orders?cursor=${encodeURIComponent(byUpdated)}`,
        `/v1/events/${eventId}/orders?cursor=${encodeURIComponent(organiserWide)}`,
        `/v1/orders?cursor=${encodeURIComponent(byCreated)}`,
      ];
      for (const path of refused)
        assertErrorBody(await api('GET', path, { key: organiser.key }), 400, 'invalid_cursor');
    });

    it('refuses a cursor whose anchor order was deleted with 400 invalid_cursor', async () => {
      const anchorEvent = await insertEvent(organiser.id);
      await inBatches([1, 2, 3], 3, () => createOrder(anchorEvent, { status: 'confirmed' }));
      const first = await list(`/v1/events/${anchorEvent}/orders?limit=1`);
      const cursor = first.next_cursor!;
      assert.equal(
        (await list(`/v1/events/${anchorEvent}/orders?limit=1&cursor=${encodeURIComponent(cursor)}`)).data.length,
        1,
      );
      const deleted = await admin('DELETE', `/internal/orders/${first.data[0].id}`);
      assert.equal(deleted.status, 200, deleted.text);
      const result = await api('GET', `/v1/events/${anchorEvent}/orders?limit=1&cursor=${encodeURIComponent(cursor)}`, {
        key: organiser.key,
      });
      assertErrorBody(result, 400, 'invalid_cursor');
    });
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

  describe('bad internal input', () => {
    let eventId: string;
    before(async () => {
      eventId = await insertEvent(organiser.id);
    });

    const valid = (): Record<string, unknown> => ({
      eventId,
      status: 'confirmed',
      lineItems: [{ quantity: 1, unitAmountMinor: 100 }],
      totalAmountMinor: 100,
      currency: 'EUR',
    });

    async function assertRefused(body: unknown, pattern?: RegExp): Promise<void> {
      const before = await rowCounts();
      const emittedBefore = emitted.length;
      const result = await admin('POST', '/internal/orders', { body });
      assertErrorBody(result, 400, 'invalid_argument');
      if (pattern !== undefined) assert.match(result.body.message, pattern);
      assert.deepEqual(await rowCounts(), before, `nothing written for ${JSON.stringify(body)}`);
      assert.equal(emitted.length, emittedBefore, 'nothing published');
    }

    it('accepts the valid body the refusals below start from', async () => {
      const result = await admin('POST', '/internal/orders', { body: valid() });
      assert.equal(result.status, 201, result.text);
    });

    it('refuses an unknown or missing event with 400 invalid_argument', async () => {
      await assertRefused(
        { ...valid(), eventId: 'evt_000000000000000000000000' },
        /eventId does not name an existing event/,
      );
      await assertRefused({ ...valid(), eventId: undefined }, /eventId/);
      await assertRefused({ ...valid(), eventId: 42 }, /eventId/);
    });

    it('refuses a negative or non-integer quantity', async () => {
      for (const quantity of [-1, 1.5, '2', null, Number.MAX_SAFE_INTEGER + 2]) {
        await assertRefused({ ...valid(), lineItems: [{ quantity, unitAmountMinor: 100 }] }, /quantity/);
      }
      await assertRefused({ ...valid(), lineItems: [{ unitAmountMinor: 100 }] }, /quantity/);
    });

    it('refuses line items whose quantities add up beyond a safe integer', async () => {
      await assertRefused({
        ...valid(),
        lineItems: [{ quantity: Number.MAX_SAFE_INTEGER }, { quantity: 1 }],
      });
    });

    it('refuses a non-integer or negative amount', async () => {
      for (const totalAmountMinor of [-1, 10.5, '100', null, 2 ** 53, 1e20]) {
        await assertRefused({ ...valid(), totalAmountMinor }, /totalAmountMinor/);
      }
      await assertRefused({ ...valid(), totalAmountMinor: undefined }, /totalAmountMinor/);
      for (const unitAmountMinor of [-5, 0.5, '100']) {
        await assertRefused({ ...valid(), lineItems: [{ quantity: 1, unitAmountMinor }] }, /unitAmountMinor/);
      }
    });

    it('refuses an unknown status', async () => {
      for (const status of ['shipped', 'CONFIRMED', 1, true]) await assertRefused({ ...valid(), status }, /status/);
    });

    it('refuses lineItems that are missing, empty or not an array', async () => {
      for (const lineItems of [undefined, [], 'one', 3, { quantity: 1 }, [null], [1], ['x']]) {
        await assertRefused({ ...valid(), lineItems }, /lineItems/);
      }
    });

    it('refuses a currency that is not a string or null', async () => {
      for (const currency of [978, true, { code: 'EUR' }, ['EUR'], 'euro']) {
        await assertRefused({ ...valid(), currency }, /currency/);
      }
    });

    it('refuses other mistyped fields', async () => {
      await assertRefused({ ...valid(), isRsvp: 'yes' }, /isRsvp/);
      await assertRefused({ ...valid(), billingName: 12 }, /billingName/);
      await assertRefused({ ...valid(), paymentProvider: false }, /paymentProvider/);
    });

    it('refuses a mistyped PATCH field and leaves the order as it was', async () => {
      const order = await createOrder(eventId, { billingName: 'Kept' });
      for (const body of [{ billingName: 7 }, { billingEmail: ['a'] }, { attributionSource: {} }]) {
        assertErrorBody(await admin('PATCH', `/internal/orders/${order.id}`, { body }), 400, 'invalid_argument');
      }
      const stored = await db.query(
        `SELECT billing_name, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at
           FROM "order" WHERE id = $1`,
        [order.id],
      );
      assert.deepEqual(stored.rows, [{ billing_name: 'Kept', updated_at: order.updatedAt }]);
    });
  });

  describe('for the webhooks context', () => {
    it('webhookData reads an order inside a transaction, in integer minor units with currency normalised', async () => {
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
      const orders = service.running.app.get(OrdersService);
      const dataSource = service.running.app.get(DataSource);
      const data = await dataSource.transaction((manager) => orders.webhookData(order.id, manager));
      assert.deepEqual(data, {
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
      const nullCurrency = await createOrder(eventId, { currency: null });
      const other = await dataSource.transaction((manager) => orders.webhookData(nullCurrency.id, manager));
      assert.equal(other?.currency, 'EUR');
      assert.equal(await dataSource.transaction((manager) => orders.webhookData('ord_missing', manager)), null);
    });

    it('webhookData sees the confirmation inside the publishing transaction', async () => {
      const eventId = await insertEvent(organiser.id);
      const order = await createOrder(eventId, { totalAmountMinor: 999 });
      const orders = service.running.app.get(OrdersService);
      const emitter = service.running.app.get(EventEmitter2);
      const seen: unknown[] = [];
      const listener = async (event: OrderConfirmedDomainEvent, tx: Transaction): Promise<void> => {
        if (event.orderId === order.id) seen.push(await orders.webhookData(event.orderId, tx.manager));
      };
      // The bus publishes with emitAsync, which awaits a listener's promise inside the transaction.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises
      emitter.on('order.confirmed', listener);
      try {
        await admin('POST', `/internal/orders/${order.id}/confirm`);
      } finally {
        // eslint-disable-next-line @typescript-eslint/no-misused-promises
        emitter.off('order.confirmed', listener);
      }
      assert.equal(seen.length, 1);
      assert.equal((seen[0] as { totalAmount: number }).totalAmount, 999);
    });
  });

  describe('API reference', () => {
    it('describes both order lists and the Order schema in the OpenAPI document, and no internal route', async () => {
      const result = await api('GET', '/openapi.json');
      assert.equal(result.status, 200);
      assert.ok(result.body.paths['/v1/orders']?.get);
      assert.ok(result.body.paths['/v1/events/{eventId}/orders']?.get);
      assert.equal(result.body.paths['/internal/orders'], undefined);
      const schema = result.body.components.schemas.Order;
      assert.deepEqual(Object.keys(schema.properties), ORDER_FIELDS);
    });
  });
});
