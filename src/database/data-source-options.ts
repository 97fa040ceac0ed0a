import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { DEFAULT_DB_CONNECT_TIMEOUT_SECONDS, DEFAULT_DB_POOL_MAX } from '../config/app-config';

/**
 * The one description of the database, shared by the application (through
 * @nestjs/typeorm) and by `ormconfig.ts` for the TypeORM CLI. Schema changes
 * happen only through the migrations folder; `synchronize` is never on.
 */
/** Where TypeORM records the migrations it ran (read by the readiness check too). */
export const MIGRATIONS_TABLE = 'schema_migration';

export function dataSourceOptions(
  url: string,
  poolMax: number = DEFAULT_DB_POOL_MAX,
  connectTimeoutMs: number = DEFAULT_DB_CONNECT_TIMEOUT_SECONDS * 1000,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrationsRun: false,
    entities: [join(__dirname, '..', '**', '*.entity.js')],
    migrations: [join(__dirname, 'migrations', '*.js')],
    migrationsTableName: MIGRATIONS_TABLE,
    // Each migration commits on its own, so one that converts data in batches can opt out (transaction = false).
    migrationsTransactionMode: 'each',
    // pg's pool waits for ever by default, for a new connection's start-up and for a free one alike.
    extra: { max: poolMax, application_name: 'events-api', connectionTimeoutMillis: connectTimeoutMs },
  };
}
