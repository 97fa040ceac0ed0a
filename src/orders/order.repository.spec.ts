import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { EventEntity } from '../events/entities/event.entity';
import { OrganiserRepository } from '../identity/organiser.repository';
import { OrderEntity } from './entities/order.entity';
import type { OrderStatus } from './order-status';
import { OrderRepository, type NewOrder } from './order.repository';

/** Every statement of OrderRepository, on real PostgreSQL. */
describe('OrderRepository', () => {
  let db: RepositoryDatabase;
  let orders: OrderRepository;

  function newOrder(
    id: string,
    eventId: string,
    organizerId: string,
    status: OrderStatus,
    fields: Partial<NewOrder> = {},
  ) {
    return {
      id,
      eventId,
      organizerId,
      status,
      isRsvp: false,
      quantity: 3,
      totalAmountMinor: 2501,
      currency: ' eur',
      billingName: 'Grace',
      billingEmail: 'grace@example.test',
      attributionSource: null,
      paymentProvider: 'adyen',
      ...fields,
    };
  }
  const insert = (order: NewOrder) =>
    db.unitOfWork.run((tx) => orders.insert(order, [{ quantity: order.quantity, unitAmountMinor: null }], tx));
  const listIds = (page: { items: Array<{ id: string }> }) => page.items.map((order) => order.id);
  const FIRST_PAGE = { limit: 10, cursor: null, updatedAfter: null };

  before(async () => {
    db = await repositoryDatabase();
    orders = new OrderRepository(db.dataSource.getRepository(OrderEntity), db.database, db.pager);
    const organisers = new OrganiserRepository(db.dataSource, db.database, db.pager);
    for (const id of ['org_a', 'org_b']) {
      await organisers.insert({ id, name: id, placeholder: false });
      await db.dataSource.getRepository(EventEntity).insert({
        id: `evt_${id}`,
        organizerId: id,
        createdAt: new Date(),
        updatedAt: new Date(),
      });
    }
  });
  after(async () => db.close());

  it('returns the view, owner and payment provider from the insert, currency normalised and amounts exact', async () => {
    const written = await insert(newOrder('ord_1', 'evt_org_a', 'org_a', 'pending'));
    const { createdAt, updatedAt, ...rest } = written;
    assert.match(createdAt, /Z$/);
    assert.equal(updatedAt, createdAt);
    assert.deepEqual(rest, {
      id: 'ord_1',
      eventId: 'evt_org_a',
      status: 'pending',
      isRsvp: false,
      quantity: '3',
      totalAmountMinor: '2501',
      currency: 'EUR',
      billingName: 'Grace',
      billingEmail: 'grace@example.test',
      attributionSource: null,
      organizerId: 'org_a',
      paymentProvider: 'adyen',
    });
    const empty = await insert(newOrder('ord_nocur', 'evt_org_a', 'org_a', 'pending', { currency: null }));
    assert.equal(empty.currency, 'EUR');
  });

  it('confirms a pending order once: a second confirmation, or one of an unknown order, changes nothing', async () => {
    await insert(newOrder('ord_c', 'evt_org_a', 'org_a', 'pending'));
    const confirmed = await db.unitOfWork.run((tx) => orders.confirmIfPending('ord_c', tx));
    assert.equal(confirmed?.status, 'confirmed');
    assert.equal(confirmed?.paymentProvider, 'adyen');
    assert.ok(
      (confirmed?.updatedAt ?? '') > (confirmed?.createdAt ?? ''),
      'updatedAt moves, even within the millisecond',
    );
    assert.equal(await db.unitOfWork.run((tx) => orders.confirmIfPending('ord_c', tx)), null);
    assert.equal(await db.unitOfWork.run((tx) => orders.confirmIfPending('ord_missing', tx)), null);
    await insert(newOrder('ord_failed', 'evt_org_a', 'org_a', 'failed'));
    assert.equal(await db.unitOfWork.run((tx) => orders.confirmIfPending('ord_failed', tx)), null);
    assert.equal((await db.unitOfWork.run((tx) => orders.findView('ord_failed', tx)))?.status, 'failed');
    assert.equal(await db.unitOfWork.run((tx) => orders.findView('ord_missing', tx)), null);
  });

  it('rewrites only the fields given (null clears one), moves updatedAt, and returns the view', async () => {
    await insert(newOrder('ord_r', 'evt_org_a', 'org_a', 'pending', { attributionSource: 'newsletter' }));
    const rewritten = await db.unitOfWork.run((tx) => orders.rewrite('ord_r', { billingName: null }, tx));
    assert.equal(rewritten?.billingName, null);
    assert.equal(rewritten?.billingEmail, 'grace@example.test');
    assert.equal(rewritten?.attributionSource, 'newsletter');
    assert.ok((rewritten?.updatedAt ?? '') > (rewritten?.createdAt ?? ''));
    assert.equal(await db.unitOfWork.run((tx) => orders.rewrite('ord_missing', {}, tx)), null);
  });

  it("lists confirmed orders to their organiser only, per organiser and per event; the dashboard's list has every status", async () => {
    await insert(newOrder('ord_a_conf', 'evt_org_a', 'org_a', 'confirmed'));
    await insert(newOrder('ord_b_conf', 'evt_org_b', 'org_b', 'confirmed'));
    const mine = listIds(await orders.pageForOrganiser('org_a', FIRST_PAGE));
    assert.ok(mine.includes('ord_a_conf') && mine.includes('ord_c'));
    assert.ok(!mine.includes('ord_b_conf'), "another organiser's order");
    assert.ok(!mine.includes('ord_1'), 'a pending order');
    assert.deepEqual(listIds(await orders.pageForEvent('org_b', 'evt_org_a', FIRST_PAGE)), []);
    assert.deepEqual(listIds(await orders.pageForEvent('org_b', 'evt_org_b', FIRST_PAGE)), ['ord_b_conf']);
    const any = listIds(await orders.pageAnyStatusForOrganiser('org_a', FIRST_PAGE));
    assert.ok(any.includes('ord_1') && any.includes('ord_failed') && !any.includes('ord_b_conf'));
    const first = await orders.pageForOrganiser('org_a', { ...FIRST_PAGE, limit: 1 });
    const second = await orders.pageForOrganiser('org_a', { ...FIRST_PAGE, limit: 1, cursor: first.nextCursor });
    assert.notDeepEqual(listIds(first), listIds(second));
  });

  it('tells ownership by organiser, and deletes an order once', async () => {
    assert.equal(await orders.organiserOwnsOrder('org_a', 'ord_1'), true);
    assert.equal(await orders.organiserOwnsOrder('org_b', 'ord_1'), false);
    assert.equal(await orders.delete('ord_1'), true);
    assert.equal(await orders.delete('ord_1'), false);
  });
});
