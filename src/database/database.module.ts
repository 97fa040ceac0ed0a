import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { APP_CONFIG, ConfigError, type AppConfig } from '../config/app-config';
import { ClosingOnTimeoutClient } from './closing-client';
import { PG_WITH_MARKING_POOL } from './connection-unavailable';
import { markedAsConnectionFailure } from './connection-failure';
import { dataSourceOptions } from './data-source-options';
import { NotificationHub } from './notifications/notification-hub';
import { ServiceSettings } from './service-settings';
import { ScheduledJobs } from './jobs/scheduled-jobs';
import { Database } from './sql/sql-target';
import { InstanceRegistry } from './instances/instance-registry';
import { UnitOfWork } from './unit-of-work';
import { applyPendingMigrations, refusePendingMigrations } from './schema-migrations';
import { settingsRefusal } from './settings-refusal';

/** How much later than the client PostgreSQL ends a pool statement itself (see the pool's `statement_timeout`). */
export const SERVER_BOUND_MARGIN_MS = 1_000;

/**
 * Migrations copy and vacuum whole tables: they run on a connection of their
 * own, without the bound every query of the application's pool has, which
 * is closed once they are done.
 */
async function withMigrationSource(
  options: DataSourceOptions,
  work: (source: DataSource) => Promise<void>,
): Promise<void> {
  const {
    query_timeout: _bounded,
    statement_timeout: _boundedThere,
    Client: _closing,
    ...extra
  } = (options.extra ?? {}) as Record<string, unknown>;
  const source = await new DataSource({
    ...options,
    // Migrations read no entity: their connection skips building the entities' metadata.
    entities: [],
    migrationsRun: false,
    extra: { ...extra, max: 1 },
  })
    .initialize()
    .catch((error: unknown) => {
      throw markedAsConnectionFailure(error);
    });
  try {
    await work(source);
  } finally {
    await source.destroy();
  }
}

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (config.databaseUrl === null) throw new Error('the database URL is resolved before the app is created');
        const options = dataSourceOptions(config.databaseUrl, config.dbPoolMax, config.dbConnectTimeoutMs);
        // Entities are registered by each context's TypeOrmModule.forFeature.
        return {
          ...options,
          entities: [],
          autoLoadEntities: true,
          // Every query of the pool, TypeORM's own included (BEGIN, COMMIT, repository calls), waits for its
          // answer at most DB_STATEMENT_TIMEOUT_SECONDS, queued or sent: a silent server fails a request
          // instead of holding it, or running it long after its client was answered.
          extra: {
            ...options.extra,
            query_timeout: config.dbStatementTimeoutMs,
            // The server's own bound, a second past the client's: a statement the client gave up on (and whose
            // connection it closed) would otherwise wait on in PostgreSQL, a lock say, holding its backend, while
            // the pool opens another in its place; behind a held lock they added up to max_connections.
            statement_timeout: config.dbStatementTimeoutMs + SERVER_BOUND_MARGIN_MS,
            Client: ClosingOnTimeoutClient,
          },
          // A connection the pool cannot lend is told apart from a statement that failed once sent (503, not 500).
          driver: PG_WITH_MARKING_POOL,
          // A wrong password or database name is answered the same on every try, and a schema behind this build
          // (refused where migrations are not applied) stays behind: the start fails at once instead of retrying
          // for half a minute.
          toRetry: (error: unknown) => settingsRefusal(error) === null && !(error instanceof ConfigError),
          // Read by the factory below, which applies them its own way (or refuses a schema behind this build).
          migrationsRun: config.schemaMigrations === 'apply',
        };
      },
      // Pending migrations run at start, one instance at a time (schema-migrations.ts), where the
      // configuration applies them (`schemaMigrations`); elsewhere a schema behind this build is refused.
      // A failure closes the data source, as TypeORM's own `migrationsRun` does.
      dataSourceFactory: async (options) => {
        if (options === undefined) throw new Error('the data source options are resolved before the factory runs');
        await withMigrationSource(options, (source) =>
          options.migrationsRun === true ? applyPendingMigrations(source) : refusePendingMigrations(source),
        );
        // TypeORM's own run of the migrations takes no lock: applyPendingMigrations does.
        return new DataSource({ ...options, migrationsRun: false }).initialize().catch((error: unknown) => {
          throw markedAsConnectionFailure(error);
        });
      },
    }),
  ],
  // InstanceRegistry: which instances serve this database (the rate limiter's fallback, the connection check).
  providers: [
    // Both bound every statement's wait for its answer by DB_STATEMENT_TIMEOUT_SECONDS.
    {
      provide: UnitOfWork,
      inject: [DataSource, APP_CONFIG],
      useFactory: (dataSource: DataSource, config: AppConfig) =>
        new UnitOfWork(dataSource, config.dbStatementTimeoutMs),
    },
    {
      provide: Database,
      inject: [DataSource, APP_CONFIG],
      useFactory: (dataSource: DataSource, config: AppConfig) => new Database(dataSource, config.dbStatementTimeoutMs),
    },
    ServiceSettings,
    NotificationHub,
    ScheduledJobs,
    InstanceRegistry,
  ],
  exports: [UnitOfWork, Database, ServiceSettings, NotificationHub, ScheduledJobs, InstanceRegistry],
})
export class DatabaseModule {}
