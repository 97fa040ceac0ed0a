import { Controller, Delete, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { DeletedDto } from '../common/openapi/deleted-schema';
import { InternalOperations, InternalRefusals, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import { CreateOrderDto, OrderResponseDto, UpdateOrderDto } from './dto/order.dto';
import { OrdersService } from './orders.service';
import { InRequest, type RequestContext } from '../common/request-id/request-context';

/** The dashboard side of orders (internal-api.md); answers only on the internal listener. */
@InternalOperations('Orders')
@Controller('internal/orders')
export class OrdersInternalController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  @HttpCode(201)
  @InternalSuccess({
    status: 201,
    description: 'The Order in its public shape plus `status`.',
    body: { data: OrderResponseDto },
  })
  create(@ValidatedBody() body: CreateOrderDto, @InRequest() request: RequestContext): Promise<OrderResponseDto> {
    return this.orders.create(body, request.traceId);
  }

  @Post(':orderId/confirm')
  @HttpCode(200)
  @InternalRefusals({ conflict: 'The order is failed or abandoned' })
  @InternalSuccess({
    status: 200,
    description:
      'The Order, confirmed. `order.confirmed` is emitted once; on an order already confirmed nothing changes.',
    body: { data: OrderResponseDto },
  })
  confirm(@Param('orderId') orderId: string, @InRequest() request: RequestContext): Promise<OrderResponseDto> {
    return this.orders.confirm(orderId, request.traceId);
  }

  @Patch(':orderId')
  @InternalSuccess({ status: 200, description: 'The Order, rewritten.', body: { data: OrderResponseDto } })
  rewrite(@Param('orderId') orderId: string, @ValidatedBody() body: UpdateOrderDto): Promise<OrderResponseDto> {
    return this.orders.rewrite(orderId, body);
  }

  @Delete(':orderId')
  @InternalSuccess({ status: 200, description: 'Hard delete.', body: { data: DeletedDto } })
  delete(@Param('orderId') orderId: string): Promise<DeletedDto> {
    return this.orders.delete(orderId);
  }
}
