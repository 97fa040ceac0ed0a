import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertErrorBody } from './support/error-body';
import type { Organiser } from './support/fixtures';
import type { internalApi, publicApi } from './support/http-client';
import type { Client } from 'pg';
import { inBatches, byCreatedDesc, byUpdatedAsc, ordersTestContext, type Order } from './support/orders-test-context';
import { nth } from './support/defined';

describe('orders: paging', () => {
  const context = ordersTestContext();
  const { insertEvent, createOrder, list, listIds, walk } = context;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  let stranger: Organiser;
  before(() => {
    ({ api, admin, db, organiser, stranger } = context.state());
  });

  describe('paging', () => {
    let eventId: string;
    let otherEventId: string;
    let everyConfirmed: Order[];
    let eventConfirmed: Order[];

    before(async () => {
      eventId = await insertEvent(organiser.id);
      const otherEvent = await insertEvent(organiser.id);
      otherEventId = otherEvent;
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
      const instant = nth(ordered, Math.floor(ordered.length / 2), 'confirmed orders').updatedAt;
      const expected = idsOf(ordered.filter((order) => order.updatedAt >= instant));
      assert.ok(expected.length < ordered.length, 'the instant cuts the list');
      for (const limit of [100, 7]) {
        const walked = await walk(`/v1/events/${eventId}/orders`, limit, { updated_after: instant });
        assert.deepEqual(idsOf(walked), expected, `limit ${limit}`);
        assert.equal(walked[0]?.updatedAt, instant, 'an order updated exactly at the instant is included');
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
      const order = nth(eventConfirmed, 0, 'confirmed orders of the event');
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

    it('refuses a cursor from another event’s orders, or another account’s, with 400 invalid_cursor', async () => {
      const ofEvent = (await list(`/v1/events/${eventId}/orders?limit=5`)).next_cursor!;
      const ofOtherEvent = await api('GET', `/v1/events/${otherEventId}/orders?cursor=${encodeURIComponent(ofEvent)}`, {
        key: organiser.key,
      });
      assertErrorBody(ofOtherEvent, 400, 'invalid_cursor');
      assert.match(ofOtherEvent.body.message, /another list/);
      const organiserWide = (await list('/v1/orders?limit=5')).next_cursor!;
      const strangers = await api('GET', `/v1/orders?cursor=${encodeURIComponent(organiserWide)}`, {
        key: stranger.key,
      });
      assertErrorBody(strangers, 400, 'invalid_cursor');
      const own = await api('GET', `/v1/events/${eventId}/orders?cursor=${encodeURIComponent(ofEvent)}`, {
        key: organiser.key,
      });
      assert.equal(own.status, 200, own.text);
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
      const deleted = await admin('DELETE', `/internal/orders/${nth(first.data, 0, 'orders on the first page').id}`);
      assert.equal(deleted.status, 200, deleted.text);
      const result = await api('GET', `/v1/events/${anchorEvent}/orders?limit=1&cursor=${encodeURIComponent(cursor)}`, {
        key: organiser.key,
      });
      assertErrorBody(result, 400, 'invalid_cursor');
    });
  });
});
