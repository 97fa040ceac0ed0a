import { ExecutionContext, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { Database } from '../../database/sql/sql-target';
import { InstanceRegistry } from '../../database/instances/instance-registry';
import { DatabaseBudgetStorage } from './database-budget.storage';
import { READ_METHODS, READS_THROTTLER, WRITE_METHODS, WRITES_THROTTLER } from './account-rate-limit.guard';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';

function methodOf(context: ExecutionContext): string {
  return context.switchToHttp().getRequest<{ method: string }>().method.toUpperCase();
}

@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, Database, InstanceRegistry],
      useFactory: (config: AppConfig, database: Database, registry: InstanceRegistry) => ({
        // RATE_LIMIT_STORE: `database` shares every budget among the instances on the database.
        storage:
          config.rateLimit.store === 'database'
            ? new DatabaseBudgetStorage(database, registry, config.rateLimit.windowSeconds)
            : new FixedWindowThrottlerStorage(),
        throttlers: [
          {
            name: READS_THROTTLER,
            ttl: config.rateLimit.windowSeconds * 1000,
            limit: config.rateLimit.reads,
            skipIf: (context) => !READ_METHODS.includes(methodOf(context)),
          },
          {
            name: WRITES_THROTTLER,
            ttl: config.rateLimit.windowSeconds * 1000,
            limit: config.rateLimit.writes,
            skipIf: (context) => !WRITE_METHODS.includes(methodOf(context)),
          },
        ],
      }),
    }),
  ],
  exports: [ThrottlerModule],
})
export class RateLimitModule {}
