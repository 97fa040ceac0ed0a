import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { OrdersModule } from '../orders/orders.module';
import { DeliveryNotifications } from './delivery/delivery-notifications';
import { WebhookDeliveryWorker } from './delivery/webhook-delivery.worker';
import { WebhookDeliveryAttemptEntity } from './entities/webhook-delivery-attempt.entity';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { WebhookOutboxListener } from './outbox/webhook-outbox.listener';
import { WebhookSecretCipher } from './secrets/webhook-secret.cipher';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';
import { WebhooksController } from './webhooks.controller';
import { WebhooksInternalController } from './webhooks.internal.controller';
import { WebhooksService } from './webhooks.service';

/**
 * The Webhooks bounded context: subscriptions (public and internal API), the
 * outbox filled from `order.confirmed` and `event.published` in their own
 * transactions, and the worker that delivers it.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookSubscriptionEntity, WebhookDeliveryEntity, WebhookDeliveryAttemptEntity]),
    OrdersModule,
    EventsModule,
  ],
  controllers: [WebhooksController, WebhooksInternalController],
  providers: [
    WebhooksService,
    WebhookSubscriptionRepository,
    WebhookDeliveryRepository,
    WebhookSecretCipher,
    WebhookOutboxListener,
    DeliveryNotifications,
    WebhookDeliveryWorker,
  ],
  exports: [WebhooksService],
})
export class WebhooksModule {}
