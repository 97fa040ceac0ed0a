import { Controller, Delete, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations, InternalRefusals } from '../common/openapi/internal-operations.decorator';
import { CreateOrderDto, UpdateOrderDto, type OrderResponseDto } from './dto/order.dto';
import { OrdersService } from './orders.service';
import { InRequest, type RequestContext } from '../common/request-id/request-context';

/** The dashboard side of orders (internal-api.md); answers only on the internal listener. */
@InternalOperations('Orders')
@Controller('internal/orders')
export class OrdersInternalController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  @HttpCode(201)
  create(@ValidatedBody() body: CreateOrderDto, @InRequest() request: RequestContext): Promise<OrderResponseDto> {
    return this.orders.create(body, request.traceId);
  }

  @Post(':orderId/confirm')
  @HttpCode(200)
  @InternalRefusals({ conflict: 'The order is failed or abandoned' })
  confirm(@Param('orderId') orderId: string, @InRequest() request: RequestContext): Promise<OrderResponseDto> {
    return this.orders.confirm(orderId, request.traceId);
  }

  @Patch(':orderId')
  rewrite(@Param('orderId') orderId: string, @ValidatedBody() body: UpdateOrderDto): Promise<OrderResponseDto> {
    return this.orders.rewrite(orderId, body);
  }

  @Delete(':orderId')
  delete(@Param('orderId') orderId: string): Promise<{ id: string; deleted: true }> {
    return this.orders.delete(orderId);
  }
}
