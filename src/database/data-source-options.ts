import { join } from 'node:path';
import { defaults as pgDefaults } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { DEFAULT_DB_CONNECT_TIMEOUT_SECONDS, DEFAULT_DB_POOL_MAX } from '../config/app-config';

/**
 * pg sends a Date parameter as local wall time with the local offset in
 * whole minutes. Where the process's time zone once kept a local mean time
 * with seconds (Europe/Berlin before 1893: +00:53:28), the seconds are lost
 * and the instant moves: `0001-01-01T00:00:00Z` was stored 28 s late. Sent
 * as UTC, every instant is stored as given, whatever TZ the service runs
 * in. Set here, where every user of the database takes its options, before
 * any connection exists.
 */
pgDefaults.parseInputDatesAsUTC = true;

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
