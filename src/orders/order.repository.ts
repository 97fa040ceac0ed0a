import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Page } from '../common/envelope/page';
import { defineKeysetList, KeysetPager, type KeysetListShape } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { column, defineColumns, isoTime } from '../database/sql/sql-columns';
import { sql, sqlText } from '../database/sql/sql-fragment';
import { defineStatement } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import type { Transaction } from '../database/unit-of-work';
import { OrderLineItemEntity } from './entities/order-line-item.entity';
import { OrderEntity } from './entities/order.entity';
import type { OrderStatus } from './order-status';

/**
 * The Order as every read and write yields it, with timestamps formatted by
 * PostgreSQL once: list pages skip both pg's Date conversion and entity hydration.
 */
export const ORDER_VIEW = defineColumns({
  id: column<string>('o.id'),
  eventId: column<string | null>('o.event_id'),
  status: column<OrderStatus>('o.status'),
  isRsvp: column<boolean>('o.is_rsvp'),
  /** bigint arrives as text; CHECK constraints keep it a safe integer. */
  quantity: column<string>('o.quantity'),
  totalAmountMinor: column<string>('o.total_amount_minor'),
  /** Stored currencies are inconsistent in case (and may be null or empty); the contract's is uppercase, default EUR. */
  currency: column<string>(`COALESCE(NULLIF(upper(btrim(o.currency)), ''), 'EUR')`),
  billingName: column<string | null>('o.billing_name'),
  billingEmail: column<string | null>('o.billing_email'),
  attributionSource: column<string | null>('o.attribution_source'),
  createdAt: isoTime('o.created_at'),
  updatedAt: isoTime('o.updated_at'),
});
export type OrderView = typeof ORDER_VIEW.View;

/** What a creation or a confirmation returns: the view, its owner, and what `order.confirmed` carries besides. */
export type WrittenOrder = OrderView & { organizerId: string | null; paymentProvider: string | null };
const WRITTEN = sql`${ORDER_VIEW.select}, o.organizer_id AS "organizerId", o.payment_provider AS "paymentProvider"`;

/** Only confirmed orders are ever listed; a literal, so the partial indexes apply. */
const CONFIRMED = sqlText(`o.status = 'confirmed'`);

/**
 * Every write moves updatedAt, even a second write in the same millisecond or
 * transaction, so an `updated_after` poll never misses one.
 */
const MOVED_UPDATED_AT = sqlText(`GREATEST(now(), o.updated_at + interval '1 millisecond')`);

const LIST_SHAPE = {
  select: ORDER_VIEW.select,
  from: `"order" o`,
  idColumn: 'o.id',
  anchorTable: `"order"`,
} as const satisfies Partial<KeysetListShape<object>>;

/** The organiser's confirmed orders across its events: one scan of a partial index per page. */
const ORGANISER_LIST = defineKeysetList<{ organizerId: string }, OrderView>({
  ...LIST_SHAPE,
  where: (p) => [sql`o.organizer_id = ${p.organizerId}`, CONFIRMED],
  // Each list has its own cursor names, so a cursor from one list is refused by the other.
  orderings: {
    default: { name: 'orders:created_at_desc', column: 'o.created_at', direction: 'DESC' },
    updatedAfter: { name: 'orders:updated_at_asc', column: 'o.updated_at', direction: 'ASC' },
  },
  prepared: true,
});

/** Confirmed orders of one event, limited to the organiser's own. */
const EVENT_LIST = defineKeysetList<{ eventId: string; organizerId: string }, OrderView>({
  ...LIST_SHAPE,
  where: (p) => [sql`o.event_id = ${p.eventId}`, sql`o.organizer_id = ${p.organizerId}`, CONFIRMED],
  orderings: {
    default: { name: 'event_orders:created_at_desc', column: 'o.created_at', direction: 'DESC' },
    updatedAfter: { name: 'event_orders:updated_at_asc', column: 'o.updated_at', direction: 'ASC' },
  },
  prepared: true,
});

const DASHBOARD_ORDERING = {
  name: 'dashboard_orders:created_at_desc',
  column: 'o.created_at',
  direction: 'DESC',
} as const;
/** Every order of the organiser's events, whatever its status, newest first (the dashboard's list). */
const ANY_STATUS_LIST = defineKeysetList<{ organizerId: string }, OrderView>({
  ...LIST_SHAPE,
  where: (p) => [sql`o.organizer_id = ${p.organizerId}`],
  orderings: { default: DASHBOARD_ORDERING, updatedAfter: DASHBOARD_ORDERING },
  prepared: false,
});

const OWNED = defineStatement<{ orderId: string; organizerId: string }>(
  (p) => sql`SELECT 1 FROM "order" WHERE id = ${p.orderId} AND organizer_id = ${p.organizerId}`,
  { prepared: false },
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

const INSERT = defineStatement<NewOrder, WrittenOrder>(
  (p) => sql`INSERT INTO "order" AS o (id, event_id, organizer_id, status, is_rsvp, quantity, total_amount_minor,
                                       currency, billing_name, billing_email, attribution_source, payment_provider)
             VALUES (${p.id}, ${p.eventId}, ${p.organizerId}, ${p.status}, ${p.isRsvp}, ${p.quantity},
                     ${p.totalAmountMinor}, ${p.currency}, ${p.billingName}, ${p.billingEmail},
                     ${p.attributionSource}, ${p.paymentProvider})
             RETURNING ${WRITTEN}`,
  { prepared: false },
);

/**
 * The statements of a confirmation (`POST /internal/orders/{id}/confirm`),
 * prepared: every confirmation runs them, and each fans out to webhook deliveries.
 */
const CONFIRM_IF_PENDING = defineStatement<{ orderId: string }, WrittenOrder>(
  (p) => sql`UPDATE "order" o SET status = 'confirmed', updated_at = ${MOVED_UPDATED_AT}
              WHERE o.id = ${p.orderId} AND o.status = 'pending'
          RETURNING ${WRITTEN}`,
  { prepared: true },
);
const VIEW = defineStatement<{ orderId: string }, OrderView>(
  (p) => sql`SELECT ${ORDER_VIEW.select} FROM "order" o WHERE o.id = ${p.orderId}`,
  { prepared: true },
);

/** The rewritable fields: a field is written when given (null clears it), and kept when left out. */
export interface OrderRewrite {
  billingName?: string | null;
  billingEmail?: string | null;
  attributionSource?: string | null;
}

const REWRITE = defineStatement<
  {
    orderId: string;
    setBillingName: boolean;
    billingName: string | null;
    setBillingEmail: boolean;
    billingEmail: string | null;
    setAttributionSource: boolean;
    attributionSource: string | null;
  },
  OrderView
>(
  (p) => sql`UPDATE "order" o
                SET billing_name = CASE WHEN ${p.setBillingName}::boolean THEN ${p.billingName}::text ELSE o.billing_name END,
                    billing_email = CASE WHEN ${p.setBillingEmail}::boolean THEN ${p.billingEmail}::text ELSE o.billing_email END,
                    attribution_source = CASE WHEN ${p.setAttributionSource}::boolean
                                              THEN ${p.attributionSource}::text ELSE o.attribution_source END,
                    updated_at = ${MOVED_UPDATED_AT}
              WHERE o.id = ${p.orderId}
          RETURNING ${ORDER_VIEW.select}`,
  { prepared: false },
);

@Injectable()
export class OrderRepository {
  constructor(
    @InjectRepository(OrderEntity) private readonly orders: Repository<OrderEntity>,
    private readonly database: Database,
    private readonly pager: KeysetPager,
  ) {}

  /** Confirmed orders across the organiser's events: one scan of a partial index per page. */
  async pageForOrganiser(organizerId: string, request: PageRequest): Promise<Page<OrderView>> {
    return this.pager.page(ORGANISER_LIST, { organizerId }, request);
  }

  /**
   * Confirmed orders of one event, limited to the organiser's own. A row in
   * the page therefore proves the organiser owns the event; only an empty
   * page needs EventsService.isOwnedBy to tell "none yet" from "not yours".
   */
  async pageForEvent(organizerId: string, eventId: string, request: PageRequest): Promise<Page<OrderView>> {
    return this.pager.page(EVENT_LIST, { eventId, organizerId }, request);
  }

  /** Every order of the organiser's events, whatever its status, newest first (the dashboard's list). */
  async pageAnyStatusForOrganiser(organizerId: string, request: PageRequest): Promise<Page<OrderView>> {
    return this.pager.page(ANY_STATUS_LIST, { organizerId }, request);
  }

  /** Whether the order exists and belongs to the organiser (through its event). */
  async organiserOwnsOrder(organizerId: string, orderId: string): Promise<boolean> {
    return (await OWNED.one({ orderId, organizerId }, this.database)) !== null;
  }

  /** The order's view, whatever its status. */
  async findView(orderId: string, tx: Transaction): Promise<OrderView | null> {
    return VIEW.one({ orderId }, tx);
  }

  /** The order and its line items (in the order given); returns the order as written. */
  async insert(order: NewOrder, lineItems: NewLineItem[], tx: Transaction): Promise<WrittenOrder> {
    const written = await INSERT.one(order, tx);
    if (written === null) throw new Error('an INSERT … RETURNING returned no row');
    await tx.manager.insert(
      OrderLineItemEntity,
      lineItems.map((item, position) => ({
        orderId: order.id,
        position,
        quantity: item.quantity,
        unitAmountMinor: item.unitAmountMinor,
      })),
    );
    return written;
  }

  /**
   * The pending to confirmed transition, as one conditional update: of any
   * number of concurrent attempts exactly one changes the row (the others
   * wait for its lock, re-check `status` and match nothing). Returns the
   * order as confirmed when this call made the transition, else null.
   */
  async confirmIfPending(orderId: string, tx: Transaction): Promise<WrittenOrder | null> {
    return CONFIRM_IF_PENDING.one({ orderId }, tx);
  }

  /** The order as rewritten; null when no order has that id. */
  async rewrite(orderId: string, changes: OrderRewrite, tx: Transaction): Promise<OrderView | null> {
    return REWRITE.one(
      {
        orderId,
        setBillingName: changes.billingName !== undefined,
        billingName: changes.billingName ?? null,
        setBillingEmail: changes.billingEmail !== undefined,
        billingEmail: changes.billingEmail ?? null,
        setAttributionSource: changes.attributionSource !== undefined,
        attributionSource: changes.attributionSource ?? null,
      },
      tx,
    );
  }

  /** Hard delete (line items go with it); returns false when no order has that id. */
  async delete(orderId: string): Promise<boolean> {
    const result = await this.orders.delete({ id: orderId });
    return (result.affected ?? 0) > 0;
  }
}

export interface NewLineItem {
  quantity: number;
  unitAmountMinor: number | null;
}
