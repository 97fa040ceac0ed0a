import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
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

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (config.databaseUrl === null) throw new Error('the database URL is resolved before the app is created');
        // Entities are registered by each context's TypeOrmModule.forFeature.
        return {
          ...dataSourceOptions(config.databaseUrl, config.dbPoolMax, config.dbConnectTimeoutMs),
          entities: [],
          autoLoadEntities: true,
          // A wrong password or database name is answered the same on every try: the start fails at once.
          toRetry: (error: unknown) => settingsRefusal(error) === null,
          // Read by the factory below, which applies them its own way (or refuses a schema behind this build).
          migrationsRun: config.schemaMigrations === 'apply',
        };
      },
      // Pending migrations run at start, one instance at a time (schema-migrations.ts), where the
      // configuration applies them (`schemaMigrations`); elsewhere a schema behind this build is refused.
      // A failure closes the data source, as TypeORM's own `migrationsRun` does.
      dataSourceFactory: async (options) => {
        if (options === undefined) throw new Error('the data source options are resolved before the factory runs');
        // TypeORM's own run of the migrations takes no lock: applyPendingMigrations does.
        const dataSource = await new DataSource({ ...options, migrationsRun: false })
          .initialize()
          .catch((error: unknown) => {
            throw markedAsConnectionFailure(error);
          });
        try {
          if (options.migrationsRun === true) await applyPendingMigrations(dataSource);
          else await refusePendingMigrations(dataSource);
        } catch (error) {
          await dataSource.destroy();
          throw error;
        }
        return dataSource;
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
