import { Controller, Get, Res } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { InternalOperations } from '../common/openapi/internal-operations.decorator';
import { headerRefs } from '../common/openapi/openapi-conventions';
import type { FastifyReply } from 'fastify';
import { CHECK_TIMEOUT_MS, ReadinessService } from '../health/readiness.service';
import { within } from '../../libs/time/within';
import { InstanceRegistry } from '../database/instances/instance-registry';
import { ScheduledJobs } from '../database/jobs/scheduled-jobs';
import { DatabaseMetricsCollector } from './database-metrics.collector';
import { metricsRegistry, readinessGauges, scheduledJobRunsCounter, serviceInstancesGauge } from './service-metrics';

/**
 * `GET /internal/metrics`: Prometheus text, on the admin listener with the
 * admin token like every internal route. The reply is sent here (`@Res()`),
 * so the `{data}` envelope never wraps the exposition text.
 */
@InternalOperations('Metrics')
@Controller('internal')
export class MetricsInternalController {
  constructor(
    private readonly database: DatabaseMetricsCollector,
    private readonly readiness: ReadinessService,
    private readonly instances: InstanceRegistry,
    private readonly jobs: ScheduledJobs,
  ) {}

  @Get('metrics')
  @ApiResponse({
    status: 200,
    description:
      'Prometheus text exposition format 0.0.4, not the `{data}` envelope; sent with `Cache-Control: no-store`.',
    headers: headerRefs(['X-Request-Id', 'Cache-Control']),
    content: { [metricsRegistry.contentType]: { schema: { type: 'string' } } },
  })
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    await Promise.all([this.database.collect(), this.collectReadiness(), this.collectInstances()]);
    this.collectScheduledJobs();
    const text = await metricsRegistry.metrics();
    await reply
      .header('content-type', metricsRegistry.contentType)
      .header('cache-control', 'no-store')
      .status(200)
      .send(text);
  }

  /**
   * The registry's table may be out of reach with the rest of the database:
   * unknown is then NaN, as the webhook gauges are, never a stale count that
   * reads as instances still alive.
   */
  private async collectInstances(): Promise<void> {
    // Given up after CHECK_TIMEOUT_MS as the other database reads are: a registry that hangs must not hang the scrape.
    const live = await within(this.instances.listLive(), CHECK_TIMEOUT_MS, 'the instance registry').catch(() => null);
    serviceInstancesGauge.set(live === null ? Number.NaN : live.length);
  }

  /** A copy of a tally that only grows while the process lives, so the counter's reset and refill keep it monotonic. */
  private collectScheduledJobs(): void {
    scheduledJobRunsCounter.reset();
    for (const [task, runs] of this.jobs.runsStarted) scheduledJobRunsCounter.inc({ task }, runs);
  }

  private async collectReadiness(): Promise<void> {
    const { ready, checks } = await this.readiness.check();
    readinessGauges.ready.set(ready ? 1 : 0);
    for (const [check, state] of Object.entries(checks)) readinessGauges.check.set({ check }, state === 'up' ? 1 : 0);
  }
}
