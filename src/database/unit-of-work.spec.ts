import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DataSource, EntityManager } from 'typeorm';
import { UnitOfWork } from './unit-of-work';

/** A driver error as pg reports it: an Error with a SQLSTATE code. */
function sqlError(code: string, wrapped = false): Error {
  const error = Object.assign(new Error(`sqlstate ${code}`), { code });
  return wrapped ? Object.assign(new Error('query failed'), { driverError: error }) : error;
}

/** A DataSource whose transactions fail with the given errors, in turn, before succeeding. */
function dataSourceFailingWith(errors: Error[]): DataSource {
  return {
    transaction: async <T>(work: (manager: EntityManager) => Promise<T>): Promise<T> => {
      const result = await work({} as EntityManager);
      const error = errors.shift();
      if (error !== undefined) throw error;
      return result;
    },
  } as unknown as DataSource;
}

describe('UnitOfWork', () => {
  it('runs the work again after a deadlock or serialization failure, and after-commit work only once', async () => {
    const unitOfWork = new UnitOfWork(dataSourceFailingWith([sqlError('40P01'), sqlError('40001', true)]));
    let runs = 0;
    let committed = 0;
    const result = await unitOfWork.run(async (tx) => {
      runs += 1;
      tx.afterCommit(() => (committed += 1));
      return 'done';
    });
    assert.equal(result, 'done');
    assert.equal(runs, 3);
    assert.equal(committed, 1);
  });

  it('gives up after three tries, and never retries other errors', async () => {
    const deadlocks = new UnitOfWork(dataSourceFailingWith([sqlError('40P01'), sqlError('40P01'), sqlError('40P01')]));
    await assert.rejects(
      deadlocks.run(async () => 'x'),
      { code: '40P01' },
    );
    let runs = 0;
    const other = new UnitOfWork(dataSourceFailingWith([sqlError('23505')]));
    await assert.rejects(
      other.run(async () => {
        runs += 1;
      }),
      { code: '23505' },
    );
    assert.equal(runs, 1);
  });
});
