import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';

/**
 * The one description of the database, shared by the application (through
 * @nestjs/typeorm) and by `ormconfig.ts` for the TypeORM CLI. Schema changes
 * happen only through the migrations folder; `synchronize` is never on.
 */
/** Where TypeORM records the migrations it ran (read by the readiness check too). */
export const MIGRATIONS_TABLE = 'schema_migration';

/** The pool's size when DB_POOL_MAX is not set (app-config.ts reads and checks the setting). */
export const DEFAULT_POOL_MAX = 20;
/** How long a statement waits for a connection when DB_CONNECT_TIMEOUT_SECONDS is not set (app-config.ts). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export function dataSourceOptions(
  url: string,
  poolMax: number = DEFAULT_POOL_MAX,
  connectTimeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS,
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
