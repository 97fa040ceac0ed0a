import { EventEmitter2 } from '@nestjs/event-emitter';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Client } from 'pg';
import type { OrderConfirmedDomainEvent } from '../../src/orders/domain-events/order-confirmed.domain-event';
import { fixtures, type Organiser, type Venue } from './fixtures';
import { internalApi, publicApi } from './http-client';
import { startTestService, type TestService } from './test-service';
import { nth } from './defined';

/** The Order of api-v1.md, in the contract's order. */
export const ORDER_FIELDS = [
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
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface Order {
  id: string;
  eventId: string | null;
  status: string;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

export interface ListPage {
  data: Order[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Runs `work` over `items`, `size` at a time. */
export async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await Promise.all(items.slice(start, start + size).map(work))));
  }
  return results;
}

export function byCreatedDesc(a: Order, b: Order): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : -1;
}

export function byUpdatedAsc(a: Order, b: Order): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? -1 : 1;
  return a.id < b.id ? -1 : 1;
}

export interface OrdersTestState {
  service: TestService;
  api: ReturnType<typeof publicApi>;
  admin: ReturnType<typeof internalApi>;
  db: Client;
  organiser: Organiser;
  stranger: Organiser;
  venue: Venue;
}

/**
 * The set-up every orders spec shares: one service, an owner, a stranger and
 * a venue, the confirmations the bus emitted and committed, and the helpers
 * the rules are written with. Call it inside a describe: it registers the
 * before and after hooks.
 */
export function ordersTestContext() {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  let stranger: Organiser;
  let venue: Venue;
  const emitted: OrderConfirmedDomainEvent[] = [];
  const committed: OrderConfirmedDomainEvent[] = [];

  /** Events are made by their owner, through the internal API, as the dashboard would. */
  async function insertEvent(organizerId: string | null): Promise<string> {
    const created = await admin('POST', '/internal/events', {
      body: { organizerId, title: { EN: 'Orders test event' }, startTime: new Date().toISOString() },
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data.id as string;
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
    const row = nth(result.rows, 0, 'row of counts');
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

  return {
    state: (): OrdersTestState => ({ service, api, admin, db, organiser, stranger, venue }),
    emitted,
    committed,
    insertEvent,
    createOrder,
    list,
    listIds,
    walk,
    rowCounts,
    emissionsOf,
    commitsOf,
  };
}
