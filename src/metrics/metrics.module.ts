import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { InstancesModule } from '../database/instances/instances.module';
import { DatabaseMetricsCollector } from './database-metrics.collector';
import { MetricsInternalController } from './metrics.internal.controller';

/** `GET /internal/metrics`; the counters themselves are recorded where things happen (service-metrics.ts). */
@Module({
  imports: [HealthModule, InstancesModule],
  controllers: [MetricsInternalController],
  providers: [DatabaseMetricsCollector],
})
export class MetricsModule {}
