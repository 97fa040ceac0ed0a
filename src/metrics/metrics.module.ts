import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DatabaseMetricsCollector } from './database-metrics.collector';
import { InstancesInternalController } from './instances.internal.controller';
import { MetricsInternalController } from './metrics.internal.controller';
import { TransactionHorizonRepository } from './transaction-horizon.repository';

/** `GET /internal/metrics` and `GET /internal/instances`; the counters are recorded where things happen (http-metrics.ts, delivery-metrics.ts). */
@Module({
  imports: [HealthModule, WebhooksModule],
  controllers: [MetricsInternalController, InstancesInternalController],
  providers: [DatabaseMetricsCollector, TransactionHorizonRepository],
})
export class MetricsModule {}
