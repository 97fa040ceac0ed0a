import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrderLineItemEntity } from './entities/order-line-item.entity';
import { OrderEntity } from './entities/order.entity';
import { OrderPresenter } from './order.presenter';
import { OrderRepository } from './order.repository';
import { EventsModule } from '../events/events.module';
import { OrdersController } from './orders.controller';
import { OrdersInternalController } from './orders.internal.controller';
import { OrdersService } from './orders.service';

/** The Orders bounded context; other contexts use OrdersService or listen for `order.confirmed`. */
@Module({
  imports: [TypeOrmModule.forFeature([OrderEntity, OrderLineItemEntity]), EventsModule],
  controllers: [OrdersController, OrdersInternalController],
  providers: [OrderRepository, OrderPresenter, OrdersService],
  exports: [OrdersService],
})
export class OrdersModule {}
