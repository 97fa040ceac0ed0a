import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertErrorBody } from './support/error-body';
import type { Organiser } from './support/fixtures';
import type { internalApi, publicApi } from './support/http-client';
import type { Client } from 'pg';
import { ORDER_FIELDS, ordersTestContext } from './support/orders-test-context';

describe('orders: the internal operations refuse bad input', () => {
  const context = ordersTestContext();
  const { emitted, insertEvent, createOrder, rowCounts } = context;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  before(() => {
    ({ api, admin, db, organiser } = context.state());
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
