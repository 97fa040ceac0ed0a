import { Injectable } from '@nestjs/common';
import { newResourceId } from '../../libs/ids/resource-id';
import { DomainEventBus } from '../common/domain-events/domain-event-bus';
import { Page } from '../common/envelope/page';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import type { PageRequest } from '../common/pagination/page-request';
import { UnitOfWork, type Transaction } from '../database/unit-of-work';
import { OrderConfirmedDomainEvent } from './domain-events/order-confirmed.domain-event';
import type { CreateLineItemDto, CreateOrderDto, OrderResponseDto, UpdateOrderDto } from './dto/order.dto';
import { EventsService } from '../events/events.service';
import { OrderPresenter } from './order.presenter';
import { OrderRepository, type OrderRewrite, type OrderView, type WrittenOrder } from './order.repository';

/**
 * Orders: read-only on the public API (confirmed orders of the organiser's
 * events), written by the internal API. Confirmation is the one transition
 * with a consequence: `order.confirmed`, published exactly once.
 */
@Injectable()
export class OrdersService {
  constructor(
    private readonly orders: OrderRepository,
    private readonly presenter: OrderPresenter,
    private readonly unitOfWork: UnitOfWork,
    private readonly bus: DomainEventBus,
    private readonly events: EventsService,
  ) {}

  /** GET /v1/orders: confirmed orders across the organiser's events. */
  async listForOrganiser(organizerId: string, request: PageRequest): Promise<Page<OrderResponseDto>> {
    const page = await this.orders.pageForOrganiser(organizerId, request);
    return page.map((row) => this.presenter.present(row));
  }

  /** GET /v1/events/{eventId}/orders: 404 for an event the organiser does not own, or that does not exist. */
  async listForEvent(organizerId: string, eventId: string, request: PageRequest): Promise<Page<OrderResponseDto>> {
    let page: Page<OrderView>;
    try {
      page = await this.orders.pageForEvent(organizerId, eventId, request);
    } catch (error) {
      // "Not yours" outranks a bad cursor: never tell a stranger more than 404.
      if (!(await this.events.isOwnedBy(eventId, organizerId))) throw DomainError.notFound('Event');
      throw error;
    }
    // A non-empty page already proves ownership (its rows carry the organiser).
    if (page.items.length === 0 && !(await this.events.isOwnedBy(eventId, organizerId))) {
      throw DomainError.notFound('Event');
    }
    return page.map((row) => this.presenter.present(row));
  }

  /** The dashboard's list: every order of the organiser, whatever its status, so pending ones can be confirmed. */
  async listAnyStatusForOrganiser(organizerId: string, request: PageRequest): Promise<Page<OrderResponseDto>> {
    const page = await this.orders.pageAnyStatusForOrganiser(organizerId, request);
    return page.map((row) => this.presenter.present(row));
  }

  /** The dashboard's confirm from an organiser's order list: another organiser's order is 404. */
  async confirmForOrganiser(organizerId: string, orderId: string, traceId: string): Promise<OrderResponseDto> {
    await this.assertOrganiserOwnsOrder(organizerId, orderId);
    return this.confirm(orderId, traceId);
  }

  /** For the dashboard's actions on an organiser's order list: another organiser's order is 404. */
  async assertOrganiserOwnsOrder(organizerId: string, orderId: string): Promise<void> {
    if (!(await this.orders.organiserOwnsOrder(organizerId, orderId))) throw DomainError.notFound('Order');
  }

  /**
   * Order and line items in one transaction. Created as `confirmed`, it counts
   * as the pending to confirmed transition and publishes `order.confirmed` in
   * that same transaction.
   */
  async create(input: CreateOrderDto, traceId: string): Promise<OrderResponseDto> {
    const quantity = totalQuantity(input.lineItems);
    const status = input.status ?? 'pending';
    const orderId = newResourceId('ord');
    return this.unitOfWork.run(async (tx) => {
      const event = await this.events.lockOwner(input.eventId, tx);
      if (event === null) throw DomainError.invalidArgument('eventId does not name an existing event.');
      const written = await this.orders.insert(
        {
          id: orderId,
          eventId: input.eventId,
          organizerId: event.organizerId,
          status,
          isRsvp: input.isRsvp ?? false,
          quantity,
          totalAmountMinor: input.totalAmountMinor,
          currency: input.currency ?? null,
          billingName: input.billingName ?? null,
          billingEmail: input.billingEmail ?? null,
          attributionSource: input.attributionSource ?? null,
          paymentProvider: input.paymentProvider ?? null,
        },
        input.lineItems.map((item) => ({ quantity: item.quantity, unitAmountMinor: item.unitAmountMinor ?? null })),
        tx,
      );
      if (status === 'confirmed') await this.publishConfirmed(written, tx, traceId);
      return this.presenter.present(written);
    });
  }

  /**
   * pending → confirmed, publishing `order.confirmed` only when this call's
   * conditional update made the transition. An order already confirmed is
   * returned unchanged and nothing is published; failed and abandoned are final.
   */
  async confirm(orderId: string, traceId: string): Promise<OrderResponseDto> {
    return this.unitOfWork.run(async (tx) => {
      const confirmed = await this.orders.confirmIfPending(orderId, tx);
      if (confirmed !== null) {
        await this.publishConfirmed(confirmed, tx, traceId);
        return this.presenter.present(confirmed);
      }
      const order = await this.orders.findView(orderId, tx);
      if (order === null) throw DomainError.notFound('Order');
      if (order.status !== 'confirmed') {
        throw new DomainError(
          ErrorCode.Conflict,
          `Only a pending order can be confirmed; this order is ${order.status}.`,
        );
      }
      return this.presenter.present(order);
    });
  }

  /** A rewrite of billing details: updatedAt moves, nothing is published, whatever the status. */
  async rewrite(orderId: string, input: UpdateOrderDto): Promise<OrderResponseDto> {
    const changes: OrderRewrite = {};
    if (input.billingName !== undefined) changes.billingName = input.billingName;
    if (input.billingEmail !== undefined) changes.billingEmail = input.billingEmail;
    if (input.attributionSource !== undefined) changes.attributionSource = input.attributionSource;
    return this.unitOfWork.run(async (tx) => {
      const rewritten = await this.orders.rewrite(orderId, changes, tx);
      if (rewritten === null) throw DomainError.notFound('Order');
      return this.presenter.present(rewritten);
    });
  }

  async delete(orderId: string): Promise<{ id: string; deleted: true }> {
    if (!(await this.orders.delete(orderId))) throw DomainError.notFound('Order');
    return { id: orderId, deleted: true };
  }

  /** `order.confirmed`, carrying its webhooks' data from the statement that confirmed (or created) the order. */
  private async publishConfirmed(order: WrittenOrder, tx: Transaction, traceId: string): Promise<void> {
    await this.bus.publish(
      new OrderConfirmedDomainEvent(
        order.id,
        order.eventId,
        order.organizerId,
        this.presenter.confirmedData(order),
        new Date(),
        traceId,
      ),
      tx,
    );
  }
}

/** The order's quantity: the sum over its line items, which must itself stay an exact integer. */
function totalQuantity(lineItems: CreateLineItemDto[]): number {
  const sum = lineItems.reduce((total, item) => total + item.quantity, 0);
  if (!Number.isSafeInteger(sum)) {
    throw DomainError.invalidArgument('The line items add up to a quantity that is too large.');
  }
  return sum;
}
