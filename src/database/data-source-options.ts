import { join } from 'node:path';
import { defaults as pgDefaults, type ClientBase } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { DEFAULT_DB_CONNECT_TIMEOUT_SECONDS, DEFAULT_DB_POOL_MAX } from '../config/app-config';
import { sqlText } from './sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from './sql/sql-statement';

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
 * Every session of the pool in UTC, whatever the database's default zone
 * (initdb writes the machine's zone into a new cluster): PostgreSQL then
 * writes each timestamp with the `+00` offset that the view columns read by
 * slicing (timestamptz-text.ts) instead of computing from another offset
 * (docs/performance.md, Rows as objects). pg-pool waits for it before it
 * hands a new connection out.
 */
const SESSION_IN_UTC = defineStatement<NoParams>(() => sqlText(`SET TIME ZONE 'UTC'`), { prepared: false });

async function sessionInUtc(client: ClientBase): Promise<void> {
  await SESSION_IN_UTC.affected(NO_PARAMS, { sqlConnection: () => client });
}

/** Where TypeORM records the migrations it ran (read by the readiness check too). */
export const MIGRATIONS_TABLE = 'schema_migration';

/**
 * The one description of the database, shared by the application (through
 * @nestjs/typeorm) and by `ormconfig.ts` for the TypeORM CLI. Schema changes
 * happen only through the migrations folder; `synchronize` is never on.
 */
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
    extra: {
      max: poolMax,
      application_name: 'events-api',
      connectionTimeoutMillis: connectTimeoutMs,
      onConnect: sessionInUtc,
    },
  };
}
