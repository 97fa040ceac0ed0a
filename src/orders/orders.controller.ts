import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import { AcceptsQuery, PAGING_PARAMETERS } from '../common/query/accepts-query.decorator';
import { OrderPageResponseDto, type OrderResponseDto } from './dto/order.dto';
import { OrdersService } from './orders.service';

/** The paging parameters, described once for both lists. */
function ApiPagingQuery(): MethodDecorator {
  return (target, key, descriptor) => {
    ApiQuery({ name: 'limit', required: false, type: 'integer', description: '1 to 100, default 50.' })(
      target,
      key,
      descriptor,
    );
    ApiQuery({ name: 'cursor', required: false, type: String, description: 'next_cursor of the previous page.' })(
      target,
      key,
      descriptor,
    );
    ApiQuery({
      name: 'updated_after',
      required: false,
      type: String,
      description: 'ISO 8601 or epoch ms: orders updated at or after it, by updatedAt ascending.',
    })(target, key, descriptor);
  };
}

@ApiTags('Orders')
@ApiBearerAuth()
@Controller('v1')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get('orders')
  @RequireAccess({ scope: 'orders:read', principals: ['organiser'] })
  @AcceptsQuery(...PAGING_PARAMETERS)
  @ApiOperation({ summary: "Confirmed orders across the organiser's events, newest first" })
  @ApiPagingQuery()
  @ApiOkResponse({ type: OrderPageResponseDto })
  list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>): Promise<Page<OrderResponseDto>> {
    return this.orders.listForOrganiser(auth.principal.id, query);
  }

  @Get('events/:eventId/orders')
  @RequireAccess({ scope: 'orders:read', principals: ['organiser'] })
  @AcceptsQuery(...PAGING_PARAMETERS)
  @ApiOperation({ summary: "Confirmed orders of one of the organiser's events, newest first" })
  @ApiPagingQuery()
  @ApiOkResponse({ type: OrderPageResponseDto })
  listForEvent(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<Page<OrderResponseDto>> {
    return this.orders.listForEvent(auth.principal.id, eventId, query);
  }
}
