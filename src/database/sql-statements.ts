import { Injectable } from '@nestjs/common';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { PreparedStatement } from './prepared-statement';

/** Where a statement runs: the pool (one connection for one statement), or a transaction's manager. */
export type StatementTarget = DataSource | EntityManager;

/**
 * Runs named prepared statements on the pg pool TypeORM already holds (or on
 * the connection of a transaction's manager). PostgreSQL then parses and
 * plans each hot statement once per connection instead of on every request,
 * which TypeORM's `query()` (unnamed statements only) cannot do. Errors are
 * pg's own (`code` is the SQLSTATE), as from TypeORM's `driverError`.
 */
@Injectable()
export class SqlStatements {
  constructor(private readonly dataSource: DataSource) {}

  async rows<Row extends QueryResultRow>(
    statement: PreparedStatement,
    values: unknown[],
    target: StatementTarget = this.dataSource,
  ): Promise<Row[]> {
    return (await this.run<Row>(statement, values, target)).rows;
  }

  /** The number of rows an UPDATE, INSERT or DELETE touched. */
  async affected(
    statement: PreparedStatement,
    values: unknown[],
    target: StatementTarget = this.dataSource,
  ): Promise<number> {
    return (await this.run(statement, values, target)).rowCount ?? 0;
  }

  private async run<Row extends QueryResultRow>(
    statement: PreparedStatement,
    values: unknown[],
    target: StatementTarget,
  ): Promise<{ rows: Row[]; rowCount: number | null }> {
    const config = { name: statement.name, text: statement.text, values };
    const queryRunner = target instanceof EntityManager ? target.queryRunner : undefined;
    if (queryRunner !== undefined) {
      // The transaction's own connection, so the statement sees (and holds) what the transaction does.
      const client = (await queryRunner.connect()) as PoolClient;
      return client.query<Row>(config);
    }
    return this.pool().query<Row>(config);
  }

  private pool(): Pool {
    return (this.dataSource.driver as PostgresDriver).master as Pool;
  }
}
