import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ReadinessService } from './readiness.service';

/** The readiness checks; the routes themselves are plain Fastify routes (health-routes.ts). */
@Module({
  // Terminus's own "Health Check has failed!" line per failing probe is off: ReadinessService logs changes only.
  imports: [TerminusModule.forRoot({ logger: false })],
  providers: [ReadinessService],
  exports: [ReadinessService],
})
export class HealthModule {}
