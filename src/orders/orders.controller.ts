import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import { ErrorCode } from '../common/errors/error-code';
import { EXAMPLES } from '../common/openapi/openapi-examples';
import { PublicOperation } from '../common/openapi/public-operation.decorator';
import { PageQuery } from '../common/pagination/page-query.decorator';
import type { PageRequest } from '../common/pagination/page-request';
import { PagedList } from '../common/pagination/paged-list.decorator';
import { OrderPage, type OrderResponseDto } from './dto/order.dto';
import { OrdersService } from './orders.service';

@ApiTags('Orders')
@Controller('v1')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get('orders')
  @RequireAccess({ scope: 'orders:read', principals: ['organiser'] })
  @PagedList()
  @PublicOperation({
    operationId: 'listOrders',
    summary: 'List orders',
    description:
      "Confirmed orders across all of the organiser's events, `createdAt` descending; with `updated_after`, `updatedAt` ascending. Only `confirmed` orders are ever returned.",
    success: { status: 200, description: 'A page of orders.', body: { page: OrderPage }, example: EXAMPLES.orderPage },
    errors: {
      400: [ErrorCode.InvalidCursor, ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope],
    },
  })
  list(@Auth() auth: AuthContext, @PageQuery() page: PageRequest): Promise<Page<OrderResponseDto>> {
    return this.orders.listForOrganiser(auth.principal.id, page);
  }

  @Get('events/:eventId/orders')
  @RequireAccess({ scope: 'orders:read', principals: ['organiser'] })
  @PagedList()
  @PublicOperation({
    operationId: 'listEventOrders',
    summary: "List an event's orders",
    description:
      "Confirmed orders of one of the organiser's events, `createdAt` descending; with `updated_after`, `updatedAt` ascending. A cursor from `GET /v1/orders` is refused here (`invalid_cursor`).",
    success: { status: 200, description: 'A page of orders.', body: { page: OrderPage }, example: EXAMPLES.orderPage },
    errors: {
      400: [ErrorCode.InvalidCursor, ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope],
      404: [ErrorCode.NotFound],
    },
  })
  listForEvent(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @PageQuery() page: PageRequest,
  ): Promise<Page<OrderResponseDto>> {
    return this.orders.listForEvent(auth.principal.id, eventId, page);
  }
}
