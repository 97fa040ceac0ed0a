import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { AppModule } from '../app.module';
import { RouteTable } from '../common/http/route-table';
import { PinoNestLogger } from '../common/logging/logger';
import type { AppConfig } from '../config/app-config';

/**
 * The services `npm run ops` commands run against: the whole application
 * without HTTP listeners or background work (no delivery worker, no sweeps),
 * so a command shares every rule with the API and the dashboard. It applies
 * no migration: on a schema behind this build it refuses to run.
 */
export function openOpsContext(config: AppConfig, logger: Logger): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(
    AppModule.forRoot({ ...config, runBackgroundWork: false, schemaMigrations: 'refuse-pending' }, new RouteTable()),
    // A refused start (a schema behind this build) is thrown to the CLI, which says it and stops its database.
    { logger: new PinoNestLogger(logger, { errorsThrownToCaller: true }), abortOnError: false },
  );
}
