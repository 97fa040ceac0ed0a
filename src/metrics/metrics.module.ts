import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DatabaseMetricsCollector } from './database-metrics.collector';
import { MetricsInternalController } from './metrics.internal.controller';

/** `GET /internal/metrics`; the counters are recorded where things happen (http-metrics.ts, delivery-metrics.ts). */
@Module({
  imports: [HealthModule, WebhooksModule],
  controllers: [MetricsInternalController],
  providers: [DatabaseMetricsCollector],
})
export class MetricsModule {}
