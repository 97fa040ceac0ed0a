import { Injectable } from '@nestjs/common';
import type { Pool, QueryArrayConfig, QueryArrayResult } from 'pg';
import { DataSource } from 'typeorm';
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
}

/**
 * The database outside any transaction: each statement takes a connection of
 * the pool TypeORM already holds, for as long as that statement runs.
 */
@Injectable()
export class Database implements SqlTarget {
  private readonly pool: Pool;

  constructor(dataSource: DataSource) {
    this.pool = (dataSource.driver as PostgresDriver).master as Pool;
  }

  sqlConnection(): SqlConnection {
    return this.pool;
  }
}
