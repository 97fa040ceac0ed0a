import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { Page } from '../common/envelope/page';
import { KeysetPager, prepareKeysetList, type KeysetQuery } from '../common/pagination/keyset-pager';
import { preparedStatement } from '../common/persistence/prepared-statement';
import { SqlStatements } from '../common/persistence/sql-statements';
import type { PageRequest } from '../common/pagination/page-request';
import { isoTimestampSql } from '../database/iso-timestamp-sql';
import type { OrderWebhookData } from './dto/order.dto';
import { OrderLineItemEntity } from './entities/order-line-item.entity';
import { OrderEntity } from './entities/order.entity';
import type { OrderStatus } from './order-status';
import type { OrderRow } from './order.presenter';

/** Stored currencies are inconsistent in case (and may be null or empty); the contract's is uppercase, default EUR. */
const CURRENCY = `COALESCE(NULLIF(upper(btrim(o.currency)), ''), 'EUR')`;

/**
 * Exactly the response columns, with timestamps formatted by PostgreSQL once:
 * list pages skip both pg's Date conversion and entity hydration.
 */
const ORDER_COLUMNS = [
  'o.id',
  'o.event_id AS "eventId"',
  'o.status',
  'o.is_rsvp AS "isRsvp"',
  'o.quantity',
  'o.total_amount_minor AS "totalAmountMinor"',
  `${CURRENCY} AS currency`,
  'o.billing_name AS "billingName"',
  'o.billing_email AS "billingEmail"',
  'o.attribution_source AS "attributionSource"',
  `${isoTimestampSql('o.created_at')} AS "createdAt"`,
  `${isoTimestampSql('o.updated_at')} AS "updatedAt"`,
].join(', ');

/** Only confirmed orders are ever listed; a literal, so the partial indexes apply. */
const CONFIRMED = `o.status = 'confirmed'`;

/**
 * Every write moves updatedAt, even a second write in the same millisecond or
 * transaction, so an `updated_after` poll never misses one.
 */
const MOVED_UPDATED_AT = `GREATEST(now(), updated_at + interval '1 millisecond')`;

/** Each list has its own cursor names, so a cursor from one list is refused by the other. */
const ORGANISER_ORDERINGS: KeysetQuery['orderings'] = {
  default: { name: 'orders:created_at_desc', column: 'o.created_at', direction: 'DESC' },
  updatedAfter: { name: 'orders:updated_at_asc', column: 'o.updated_at', direction: 'ASC' },
};
const EVENT_ORDERINGS: KeysetQuery['orderings'] = {
  default: { name: 'event_orders:created_at_desc', column: 'o.created_at', direction: 'DESC' },
  updatedAfter: { name: 'event_orders:updated_at_asc', column: 'o.updated_at', direction: 'ASC' },
};

/** The organiser's list of confirmed orders, compiled once (it is on the hot path). */
const ORGANISER_LIST = prepareKeysetList({
  select: ORDER_COLUMNS,
  from: `"order" o`,
  idColumn: 'o.id',
  where: ['o.organizer_id = $1', CONFIRMED],
  anchorTable: `"order"`,
  orderings: ORGANISER_ORDERINGS,
});

/**
 * The statements of a confirmation (`POST /internal/orders/{id}/confirm`), prepared: every confirmation
 * runs them, and each fans out to webhook deliveries whose throughput they were part of (bench).
 */
const CONFIRM_IF_PENDING = preparedStatement(
  `UPDATE "order" SET status = 'confirmed', updated_at = ${MOVED_UPDATED_AT}
    WHERE id = $1 AND status = 'pending'
   RETURNING event_id, organizer_id`,
);
const STATUS_OF = preparedStatement(`SELECT status FROM "order" WHERE id = $1`);
const VIEW = preparedStatement(`SELECT ${ORDER_COLUMNS} FROM "order" o WHERE o.id = $1`);
const WEBHOOK_DATA = preparedStatement(
  `SELECT o.id, o.event_id, o.total_amount_minor, ${CURRENCY} AS currency, o.is_rsvp, o.quantity,
          o.billing_name, o.billing_email, o.payment_provider
     FROM "order" o WHERE o.id = $1`,
);

export interface NewOrder {
  id: string;
  eventId: string;
  organizerId: string | null;
  status: OrderStatus;
  isRsvp: boolean;
  quantity: number;
  totalAmountMinor: number;
  currency: string | null;
  billingName: string | null;
  billingEmail: string | null;
  attributionSource: string | null;
  paymentProvider: string | null;
}

export interface NewLineItem {
  quantity: number;
  unitAmountMinor: number | null;
}

export type OrderRewrite = Partial<Pick<OrderEntity, 'billingName' | 'billingEmail' | 'attributionSource'>>;

@Injectable()
export class OrderRepository {
  constructor(
    @InjectRepository(OrderEntity) private readonly orders: Repository<OrderEntity>,
    private readonly pager: KeysetPager,
    private readonly statements: SqlStatements,
  ) {}

  /** Confirmed orders across the organiser's events: one scan of a partial index per page. */
  async pageForOrganiser(organizerId: string, request: PageRequest): Promise<Page<OrderRow>> {
    return this.pager.pageOf<OrderRow, OrderRow>(ORGANISER_LIST, [organizerId], request, (row) => row);
  }

  /**
   * Confirmed orders of one event, limited to the organiser's own. A row in
   * the page therefore proves the organiser owns the event; only an empty
   * page needs EventsService.isOwnedBy to tell "none yet" from "not yours".
   */
  async pageForEvent(organizerId: string, eventId: string, request: PageRequest): Promise<Page<OrderRow>> {
    return this.pager.page<OrderRow, OrderRow>(
      {
        select: ORDER_COLUMNS,
        from: `"order" o`,
        idColumn: 'o.id',
        where: ['o.event_id = $1', 'o.organizer_id = $2', CONFIRMED],
        params: [eventId, organizerId],
        anchorTable: `"order"`,
        orderings: EVENT_ORDERINGS,
      },
      request,
      (row) => row,
    );
  }

  /** Every order of the organiser's events, whatever its status, newest first (the dashboard's list). */
  async pageAnyStatusForOrganiser(organizerId: string, request: PageRequest): Promise<Page<OrderRow>> {
    const ordering = { name: 'dashboard_orders:created_at_desc', column: 'o.created_at', direction: 'DESC' } as const;
    return this.pager.page<OrderRow, OrderRow>(
      {
        select: ORDER_COLUMNS,
        from: `"order" o`,
        idColumn: 'o.id',
        where: ['o.organizer_id = $1'],
        params: [organizerId],
        anchorTable: `"order"`,
        orderings: { default: ordering, updatedAfter: ordering },
      },
      request,
      (row) => row,
    );
  }

  /** Whether the order exists and belongs to the organiser (through its event). */
  async organiserOwnsOrder(organizerId: string, orderId: string): Promise<boolean> {
    const rows = await this.orders.manager.query<unknown[]>(
      `SELECT 1 FROM "order" WHERE id = $1 AND organizer_id = $2`,
      [orderId, organizerId],
    );
    return rows.length > 0;
  }

  /** The order in its response shape, whatever its status (internal responses). */
  async findView(orderId: string, manager: EntityManager): Promise<OrderRow | null> {
    const rows = await this.statements.rows<OrderRow>(VIEW, [orderId], manager);
    return rows[0] ?? null;
  }

  async insert(order: NewOrder, lineItems: NewLineItem[], manager: EntityManager): Promise<void> {
    await manager.insert(OrderEntity, order);
    await manager.insert(
      OrderLineItemEntity,
      lineItems.map((item, position) => ({
        orderId: order.id,
        position,
        quantity: item.quantity,
        unitAmountMinor: item.unitAmountMinor,
      })),
    );
  }

  /**
   * The pending to confirmed transition, as one conditional update: of any
   * number of concurrent attempts exactly one changes the row (the others
   * wait for its lock, re-check `status` and match nothing). Returns the
   * order's event and owner when this call made the transition, else null.
   */
  async confirmIfPending(
    orderId: string,
    manager: EntityManager,
  ): Promise<{ eventId: string | null; organizerId: string | null } | null> {
    const rows = await this.statements.rows<{ event_id: string | null; organizer_id: string | null }>(
      CONFIRM_IF_PENDING,
      [orderId],
      manager,
    );
    const row = rows[0];
    return row === undefined ? null : { eventId: row.event_id, organizerId: row.organizer_id };
  }

  async statusOf(orderId: string, manager: EntityManager): Promise<OrderStatus | null> {
    const rows = await this.statements.rows<{ status: OrderStatus }>(STATUS_OF, [orderId], manager);
    return rows[0]?.status ?? null;
  }

  /** Returns false when no order has that id. */
  async rewrite(orderId: string, changes: OrderRewrite, manager: EntityManager): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(OrderEntity)
      .set({ ...changes, updatedAt: () => MOVED_UPDATED_AT })
      .where('id = :orderId', { orderId })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Hard delete (line items go with it); returns false when no order has that id. */
  async delete(orderId: string): Promise<boolean> {
    const result = await this.orders.delete({ id: orderId });
    return (result.affected ?? 0) > 0;
  }

  async webhookData(orderId: string, manager: EntityManager): Promise<OrderWebhookData | null> {
    const rows = await this.statements.rows<{
      id: string;
      event_id: string | null;
      total_amount_minor: string;
      currency: string;
      is_rsvp: boolean;
      quantity: string;
      billing_name: string | null;
      billing_email: string | null;
      payment_provider: string | null;
    }>(WEBHOOK_DATA, [orderId], manager);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      orderId: row.id,
      eventId: row.event_id,
      totalAmount: Number(row.total_amount_minor),
      currency: row.currency,
      isRsvp: row.is_rsvp,
      quantity: Number(row.quantity),
      billingName: row.billing_name,
      billingEmail: row.billing_email,
      paymentProvider: row.payment_provider,
    };
  }
}
