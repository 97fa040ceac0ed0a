import { Injectable } from '@nestjs/common';
import type { OrderResponseDto } from './dto/order.dto';

/** An order as the repository reads it: exactly the response columns, timestamps already formatted. */
export interface OrderRow {
  id: string;
  eventId: string | null;
  status: string;
  isRsvp: boolean;
  /** bigint arrives as text; CHECK constraints keep it a safe integer. */
  quantity: string;
  totalAmountMinor: string;
  currency: string;
  billingName: string | null;
  billingEmail: string | null;
  attributionSource: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The public Order shape (api-v1.md "Order") from its row. */
@Injectable()
export class OrderPresenter {
  present(row: OrderRow): OrderResponseDto {
    return {
      id: row.id,
      eventId: row.eventId,
      status: row.status,
      isRsvp: row.isRsvp,
      quantity: Number(row.quantity),
      totalAmountMinor: Number(row.totalAmountMinor),
      currency: row.currency,
      billingName: row.billingName,
      billingEmail: row.billingEmail,
      attributionSource: row.attributionSource,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }
}
