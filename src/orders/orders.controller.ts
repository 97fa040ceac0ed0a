import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import { PageQuery } from '../common/pagination/page-query.decorator';
import type { PageRequest } from '../common/pagination/page-request';
import { PagedList } from '../common/pagination/paged-list.decorator';
import { OrderPageResponseDto, type OrderResponseDto } from './dto/order.dto';
import { OrdersService } from './orders.service';

@ApiTags('Orders')
@ApiBearerAuth()
@Controller('v1')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get('orders')
  @RequireAccess({ scope: 'orders:read', principals: ['organiser'] })
  @PagedList()
  @ApiOperation({ summary: "Confirmed orders across the organiser's events, newest first" })
  @ApiOkResponse({ type: OrderPageResponseDto })
  list(@Auth() auth: AuthContext, @PageQuery() page: PageRequest): Promise<Page<OrderResponseDto>> {
    return this.orders.listForOrganiser(auth.principal.id, page);
  }

  @Get('events/:eventId/orders')
  @RequireAccess({ scope: 'orders:read', principals: ['organiser'] })
  @PagedList()
  @ApiOperation({ summary: "Confirmed orders of one of the organiser's events, newest first" })
  @ApiOkResponse({ type: OrderPageResponseDto })
  listForEvent(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @PageQuery() page: PageRequest,
  ): Promise<Page<OrderResponseDto>> {
    return this.orders.listForEvent(auth.principal.id, eventId, page);
  }
}
