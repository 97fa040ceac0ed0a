import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliveryNotifications } from './delivery/delivery-notifications';
import { AttemptRecordRepository } from './delivery/attempt-record.repository';
import { DeliveryClaimRepository } from './delivery/delivery-claim.repository';
import { DeliveryQueueRepository } from './delivery/delivery-queue.repository';
import { DeliveryHistoryRepository } from './delivery-history.repository';
import { DeliveryPartitionsRepository } from './delivery-partitions.repository';
import { WebhookDeliveryWorker } from './delivery/webhook-delivery.worker';
import { WebhookDeliveryAttemptEntity } from './entities/webhook-delivery-attempt.entity';
import { WebhookDeliveryEntity } from './entities/webhook-delivery.entity';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { WebhookOutboxListener } from './outbox/webhook-outbox.listener';
import { SealingKeyCheck } from './secrets/sealing-key-check';
import { WebhookSecretCipher } from './secrets/webhook-secret.cipher';
import { OutboxSenderId } from './outbox/outbox-sender-id';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';
import { WebhooksController } from './webhooks.controller';
import { WebhooksInternalController } from './webhooks.internal.controller';
import { WebhooksService } from './webhooks.service';
import { WebhookOperationsService } from './webhook-operations.service';
import { WebhookRetentionService } from './retention/webhook-retention.service';
import { WebhookWarningEntity } from './entities/webhook-warning.entity';
import { WebhookFiguresRepository } from './webhook-figures.repository';
import { WebhookFiguresService } from './webhook-figures.service';

/**
 * The Webhooks bounded context: subscriptions (public and internal API), the
 * outbox filled from `order.confirmed` and `event.published` in their own
 * transactions, the worker that delivers it, the operations on a
 * subscription (WebhookOperationsService) and the retention purge.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      WebhookSubscriptionEntity,
      WebhookDeliveryEntity,
      WebhookDeliveryAttemptEntity,
      WebhookWarningEntity,
    ]),
    // No other context's module: Events and Orders reach the outbox through their domain events,
    // which carry what a delivery needs.
  ],
  controllers: [WebhooksController, WebhooksInternalController],
  providers: [
    WebhooksService,
    WebhookOperationsService,
    WebhookSubscriptionRepository,
    DeliveryQueueRepository,
    DeliveryClaimRepository,
    AttemptRecordRepository,
    DeliveryHistoryRepository,
    DeliveryPartitionsRepository,
    WebhookSecretCipher,
    SealingKeyCheck,
    WebhookOutboxListener,
    DeliveryNotifications,
    OutboxSenderId,
    WebhookDeliveryWorker,
    WebhookRetentionService,
    WebhookFiguresRepository,
    WebhookFiguresService,
  ],
  // The dashboard and the CLI call the operations; the worker is exported so the CLI can wait for a resend;
  // the metrics read the figures.
  exports: [WebhooksService, WebhookOperationsService, WebhookDeliveryWorker, WebhookFiguresService],
})
export class WebhooksModule {}
