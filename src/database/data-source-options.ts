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

export function dataSourceOptions(url: string, poolMax: number = DEFAULT_POOL_MAX): DataSourceOptions {
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
    extra: { max: poolMax, application_name: 'events-api' },
  };
}
