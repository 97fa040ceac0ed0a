import { Injectable } from '@nestjs/common';
import type { OrderResponseDto, OrderWebhookData } from './dto/order.dto';
import type { OrderView, WrittenOrder } from './order.repository';

/** The public Order shape (api-v1.md "Order") from its view, and the `data` of `order.confirmed`. */
@Injectable()
export class OrderPresenter {
  present(view: OrderView): OrderResponseDto {
    return {
      id: view.id,
      eventId: view.eventId,
      status: view.status,
      isRsvp: view.isRsvp,
      quantity: Number(view.quantity),
      totalAmountMinor: Number(view.totalAmountMinor),
      currency: view.currency,
      billingName: view.billingName,
      billingEmail: view.billingEmail,
      attributionSource: view.attributionSource,
      createdAt: view.createdAt,
      updatedAt: view.updatedAt,
    };
  }

  /** The `data` of an `order.confirmed` delivery (api-v1.md "Events"). */
  confirmedData(order: WrittenOrder): OrderWebhookData {
    return {
      orderId: order.id,
      eventId: order.eventId,
      totalAmount: Number(order.totalAmountMinor),
      currency: order.currency,
      isRsvp: order.isRsvp,
      quantity: Number(order.quantity),
      billingName: order.billingName,
      billingEmail: order.billingEmail,
      paymentProvider: order.paymentProvider,
    };
  }
}
