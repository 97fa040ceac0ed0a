import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS } from '../config/app-config';
import type { SqlConnection, SqlTarget } from './sql/sql-target';

/**
 * One database transaction, handed to everything that must commit or roll
 * back together: repositories take its `manager`, and the domain event bus
 * runs in-transaction handlers (the webhook outbox) with it. Work registered
 * with `afterCommit` runs only once the transaction has committed.
 */
export class Transaction implements SqlTarget {
  private readonly committed: Array<() => void> = [];
  private connection: PoolClient | null = null;

  constructor(
    readonly manager: EntityManager,
    readonly statementTimeoutMs: number = DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS * 1000,
  ) {}

  /** The transaction's own connection, so a statement sees (and holds) what the transaction does. */
  sqlConnection(): SqlConnection | Promise<SqlConnection> {
    if (this.connection !== null) return this.connection;
    const queryRunner = this.manager.queryRunner;
    if (queryRunner === undefined) throw new Error("a Transaction is made from a transaction's EntityManager");
    return (queryRunner.connect() as Promise<PoolClient>).then((client) => (this.connection = client));
  }

  abandonConnection(): void {
    // Closed (not awaited: a silent server may never see it), so the rollback that follows fails at once
    // and the pool, given back a closed client, drops it instead of lending it out again.
    void this.connection?.end().catch(() => undefined);
  }

  afterCommit(work: () => void): void {
    this.committed.push(work);
  }

  /** @internal called by UnitOfWork */
  runAfterCommit(): void {
    for (const work of this.committed) work();
  }
}

/** PostgreSQL's "try again" answers: a deadlock or a serialization failure rolled the whole transaction back. */
const RETRYABLE_SQLSTATES = new Set(['40P01', '40001']);
const MAX_TRIES = 3;

function isRetryable(error: unknown): boolean {
  const code =
    (error as { code?: unknown; driverError?: { code?: unknown } }).driverError?.code ??
    (error as { code?: unknown }).code;
  return typeof code === 'string' && RETRYABLE_SQLSTATES.has(code);
}

@Injectable()
export class UnitOfWork {
  constructor(
    private readonly dataSource: DataSource,
    private readonly statementTimeoutMs: number = DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS * 1000,
  ) {}

  /**
   * Runs `work` in one transaction. A deadlock or serialization failure
   * rolled everything back, so the work is simply run again (up to three
   * times): `work` must keep its effects inside the transaction, which is
   * what the bus's in-transaction listeners and `afterCommit` guarantee.
   */
  async run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      let transaction: Transaction | undefined;
      try {
        const result = await this.dataSource.transaction(async (manager) => {
          transaction = new Transaction(manager, this.statementTimeoutMs);
          return work(transaction);
        });
        transaction?.runAfterCommit();
        return result;
      } catch (error) {
        if (attempt >= MAX_TRIES || !isRetryable(error)) throw error;
      }
    }
  }
}
