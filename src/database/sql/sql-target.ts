import { Injectable } from '@nestjs/common';
import type { Pool, QueryArrayConfig, QueryArrayResult } from 'pg';
import { DataSource } from 'typeorm';
import { DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS } from '../../config/app-config';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * What a statement runs on: pg's pool (one connection per statement) or a
 * transaction's own client. Rows arrive as arrays; the statement builds each
 * into its object (sql-statement.ts).
 */
export interface SqlConnection {
  query(config: QueryArrayConfig): Promise<QueryArrayResult>;
}

/**
 * Where a statement runs: the `Database` (outside any transaction) or a
 * `Transaction` (see unit-of-work.ts), the one type that crosses context
 * boundaries for work that must commit together.
 */
export interface SqlTarget {
  sqlConnection(): SqlConnection | Promise<SqlConnection>;
  /**
   * How long a statement waits for its answer once sent; past it, it fails
   * (DB_STATEMENT_TIMEOUT_SECONDS). The `Database` and every `Transaction`
   * have one; a single client of its own (the notification hub's) has none.
   */
  readonly statementTimeoutMs?: number;
  /**
   * A statement's answer did not come in time: the connection may still
   * carry it, so it must not serve another statement. (pg's pool closes one
   * of its own that fails; a transaction's client is closed here.)
   */
  abandonConnection?(): void;
}

/**
 * The database outside any transaction: each statement takes a connection of
 * the pool TypeORM already holds, for as long as that statement runs. It has
 * no `abandonConnection`: pg's pool releases the client of a failed
 * `pool.query` with its error, which closes it.
 */
@Injectable()
export class Database implements SqlTarget {
  private readonly pool: Pool;

  constructor(
    dataSource: DataSource,
    readonly statementTimeoutMs: number = DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS * 1000,
  ) {
    this.pool = (dataSource.driver as PostgresDriver).master as Pool;
  }

  sqlConnection(): SqlConnection {
    return this.pool;
  }
}
