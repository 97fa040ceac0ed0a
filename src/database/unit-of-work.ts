import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * One database transaction, handed to everything that must commit or roll
 * back together: repositories take its `manager`, and the domain event bus
 * runs in-transaction handlers (the webhook outbox) with it. Work registered
 * with `afterCommit` runs only once the transaction has committed.
 */
export class Transaction {
  private readonly committed: Array<() => void> = [];

  constructor(readonly manager: EntityManager) {}

  afterCommit(work: () => void): void {
    this.committed.push(work);
  }

  /** @internal called by UnitOfWork */
  runAfterCommit(): void {
    for (const work of this.committed) work();
  }
}

@Injectable()
export class UnitOfWork {
  constructor(private readonly dataSource: DataSource) {}

  async run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    let transaction: Transaction | undefined;
    const result = await this.dataSource.transaction(async (manager) => {
      transaction = new Transaction(manager);
      return work(transaction);
    });
    transaction?.runAfterCommit();
    return result;
  }
}
