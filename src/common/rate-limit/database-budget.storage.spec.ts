import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { freshDatabase } from '../../../test/support/test-database';
import { Database } from '../../database/sql/sql-target';
import type { SqlConnection, SqlTarget } from '../../database/sql/sql-target';
import { DatabaseBudgetStorage, FALLBACK_RETRY_MS } from './database-budget.storage';
import type { CountedHit } from './fixed-window.storage';

/** The database, counting the statements sent through it, which it can hold back until released. */
class GatedTarget implements SqlTarget {
  statements = 0;
  private gate: Promise<void> | null = null;
  private release: () => void = () => undefined;
  constructor(private readonly database: Database) {}

  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.gate = null;
    this.release();
  }

  sqlConnection(): SqlConnection {
    // Counted when a statement asks for its connection: in the same turn as the request that sent it.
    this.statements += 1;
    const connection = this.database.sqlConnection();
    return {
      query: async (config) => {
        if (this.gate !== null) await this.gate;
        return connection.query(config);
      },
    };
  }
}

/** The database, or (while `unreachable`) a counter out of reach: every statement fails at once. */
class SwitchableTarget implements SqlTarget {
  unreachable = false;
  constructor(private readonly database: Database) {}

  sqlConnection(): SqlConnection {
    const connection = this.database.sqlConnection();
    return {
      query: async (config) => {
        if (this.unreachable) throw new Error('connect ECONNREFUSED');
        return connection.query(config);
      },
    };
  }
}

const WINDOW_MS = 60_000;
/** A window of an hour, so a test of a few hundred requests never crosses into the next. */
const HOUR_MS = 3_600_000;

describe('the database budget storage (RATE_LIMIT_STORE=database)', () => {
  let dataSource: DataSource;
  let database: Database;

  before(async () => {
    dataSource = new DataSource({ type: 'postgres', url: await freshDatabase(), entities: [] });
    await dataSource.initialize();
    database = new Database(dataSource);
  });
  after(async () => dataSource.destroy());

  async function usedInDatabase(key: string): Promise<number> {
    const rows: Array<{ used: number }> = await dataSource.query(`SELECT used FROM rate_limit_counter WHERE key = $1`, [
      key,
    ]);
    return rows[0]?.used ?? 0;
  }

  it('asks for the rest of its block when a quarter is left, so a steady stream of requests never waits on the database', async () => {
    const target = new GatedTarget(database);
    const storage = new DatabaseBudgetStorage(target, { liveApiInstances: () => 1 }, HOUR_MS / 1000);
    const key = 'ask-ahead';
    const limit = 10_000_000; // blocks of 256 units
    const answeredAtOnce = (): boolean => !(storage.incrementNow(key, HOUR_MS, limit) instanceof Promise);

    await storage.incrementNow(key, HOUR_MS, limit);
    assert.equal(target.statements, 1);
    target.hold(); // the ask-ahead's answer is slow to come
    for (let request = 0; request < 191; request += 1) assert.ok(answeredAtOnce(), `request ${request + 2}`);
    assert.equal(target.statements, 2, 'asked ahead when 64 of 256 units were left');
    for (let request = 0; request < 64; request += 1) assert.ok(answeredAtOnce(), 'served from the quarter left');
    assert.equal(target.statements, 2, 'one ask-ahead in flight at a time');

    // The block is used up before the answer came: the next request waits for that answer, sending nothing more.
    const waiting = storage.incrementNow(key, HOUR_MS, limit);
    assert.ok(waiting instanceof Promise);
    target.open();
    assert.equal((await waiting).isBlocked, false);
    assert.equal(target.statements, 2);
    assert.ok(answeredAtOnce(), 'the rest of the block arrived');
    assert.equal(await usedInDatabase(key), 256 + 192, 'the ask-ahead topped the block up to 256 units, no more');
  });

  it('serves at most the limit across two instances asking ahead, and at least the limit less one unit', async () => {
    const key = 'two-instances';
    const limit = 20_000;
    const instances = [0, 1].map(
      () => new DatabaseBudgetStorage(database, { liveApiInstances: () => 2 }, WINDOW_MS / 1000),
    );
    let served = 0;
    let refusedInARow = 0;
    for (let request = 0; refusedInARow < 2; request += 1) {
      const hit: CountedHit = await instances[request % 2]!.incrementNow(key, WINDOW_MS, limit);
      if (hit.isBlocked) refusedInARow += 1;
      else {
        served += 1;
        refusedInARow = 0;
      }
    }
    assert.ok(served <= limit, `served ${served} of ${limit}`);
    assert.ok(served >= limit - 1, `served ${served} of ${limit}`);
    assert.equal(await usedInDatabase(key), limit);
  });

  it('adds what it served alone while the counter was out of reach to the shared window once it is back, so that window serves at most the limit in all', async () => {
    const target = new SwitchableTarget(database);
    let clock = Date.now();
    const storage = new DatabaseBudgetStorage(target, { liveApiInstances: () => 2 }, HOUR_MS / 1000, () => clock);
    const key = 'outage';
    const limit = 100;
    const serve = async (requests: number): Promise<number> => {
      let served = 0;
      for (let request = 0; request < requests; request += 1) {
        if (!(await storage.incrementNow(key, HOUR_MS, limit)).isBlocked) served += 1;
      }
      return served;
    };

    target.unreachable = true;
    const servedAlone = await serve(80);
    assert.equal(servedAlone, limit / 2, 'its share of the limit (two live instances)');

    target.unreachable = false;
    clock += FALLBACK_RETRY_MS;
    const servedAfter = await serve(200);
    const servedInAll = servedAlone + servedAfter;
    assert.ok(servedInAll <= limit, `${servedInAll} served in the window, more than the limit`);
    assert.ok(servedInAll >= limit - 1, `${servedInAll} served in the window`);
    assert.equal(await usedInDatabase(key), limit);
  });

  it('shares only what the window had left when each instance last reached the counter, so instances that served an account before an outage serve the limit and at most a block more in all, not a whole limit more', async () => {
    const limit = 100;
    const key = 'outage-after-use';
    const clock = Date.now();
    const targets = [new SwitchableTarget(database), new SwitchableTarget(database)];
    const instances = targets.map(
      (target) => new DatabaseBudgetStorage(target, { liveApiInstances: () => 2 }, HOUR_MS / 1000, () => clock),
    );
    const serve = async (storage: DatabaseBudgetStorage, requests: number): Promise<number> => {
      let served = 0;
      for (let request = 0; request < requests; request += 1) {
        if (!(await storage.incrementNow(key, HOUR_MS, limit)).isBlocked) served += 1;
      }
      return served;
    };
    // Half the window's budget served, spread over both instances, before the counter goes out of reach.
    let servedBefore = 0;
    for (let round = 0; round < 25; round += 1) {
      for (const storage of instances) servedBefore += await serve(storage, 1);
    }
    assert.equal(servedBefore, 50);
    for (const target of targets) target.unreachable = true;
    let servedAlone = 0;
    for (const storage of instances) servedAlone += await serve(storage, 100);
    const servedInAll = servedBefore + servedAlone;
    // An instance's last view of the window is at most a block behind the other's grants: its share is of a
    // little more than was really left (reservationBlock(100) is 16 units).
    const block = 16;
    assert.ok(
      servedInAll <= limit + block,
      `${servedInAll} served in the window, over the limit of ${limit} and a block`,
    );
    assert.ok(servedAlone > 0, 'each instance still serves its share of what was left: never closed');
  });

  it('serves the units it holds once across an outage: an instance alone on an account serves at most the limit however long the counter stays out of reach', async () => {
    const limit = 1_000;
    const key = 'held-across-outage';
    let clock = Date.now();
    const target = new SwitchableTarget(database);
    const storage = new DatabaseBudgetStorage(target, { liveApiInstances: () => 1 }, HOUR_MS / 1000, () => clock);
    const serve = async (k: string, requests: number): Promise<number> => {
      let served = 0;
      for (let request = 0; request < requests; request += 1) {
        if (!(await storage.incrementNow(k, HOUR_MS, limit)).isBlocked) served += 1;
      }
      return served;
    };
    // One request reserves a block; another key's failed reservation then starts the fallback.
    let served = await serve(key, 1);
    target.unreachable = true;
    await serve('other-account', 1);
    served += await serve(key, 2 * limit);
    // Past the retry interval the held units are served from the reservation, then the fallback resumes.
    clock += FALLBACK_RETRY_MS + 1;
    served += await serve(key, limit);
    assert.ok(served <= limit, `${served} served of ${limit} by the only instance`);
    assert.ok(served >= limit - 1, `${served} served`);
  });
});
