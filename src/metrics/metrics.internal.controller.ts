import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DatabaseMetricsCollector } from './database-metrics.collector';
import { metricsRegistry } from './service-metrics';

/**
 * `GET /internal/metrics`: Prometheus text, on the admin listener with the
 * admin token like every internal route. The reply is sent here (`@Res()`),
 * so the `{data}` envelope never wraps the exposition text.
 */
@ApiExcludeController()
@Controller('internal')
export class MetricsInternalController {
  constructor(private readonly database: DatabaseMetricsCollector) {}

  @Get('metrics')
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    await this.database.collect();
    const text = await metricsRegistry.metrics();
    await reply
      .header('content-type', metricsRegistry.contentType)
      .header('cache-control', 'no-store')
      .status(200)
      .send(text);
  }
}
