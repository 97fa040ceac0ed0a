import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DatabaseBudgetStorage, FALLBACK_RETRY_MS } from '../src/common/rate-limit/database-budget.storage';
import { Database } from '../src/database/sql/sql-target';
import { InstanceRegistry } from '../src/database/instances/instance-registry';
import { captureLog } from './support/captured-log';
import { sleep } from './support/eventually';
import { internalApi, publicApi, type HttpResult } from './support/http-client';
import { roomInRateWindow } from './support/rate-window';
import { secondInstance, workerInstance } from './support/second-instance';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

const LIMIT = 40;
const SETTINGS = { RATE_LIMIT_READS: String(LIMIT), RATE_LIMIT_STORE: 'database' };

async function metric(service: TestService, name: string): Promise<number> {
  const scraped = await internalApi(service)('GET', '/internal/metrics');
  const line = scraped.text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/**
 * Two instances on one database, as behind a load balancer: A (withApp) and
 * B (secondInstance). Every account budget is one counter in PostgreSQL.
 */
describe('one account budget across instances (RATE_LIMIT_STORE=database)', () => {
  const log = captureLog();
  const a = withApp({ ...SETTINGS, LOG_LEVEL: 'info' }, { logTo: log.stream });
  let b: TestService;

  /** The end of the database's current window, in unix seconds, read from its own clock. */
  async function databaseWindowEnd(): Promise<number> {
    const { rows } = await a.db.query<{ end: string }>(
      `SELECT extract(epoch FROM date_trunc('minute', now()) + interval '1 minute')::bigint AS "end"`,
    );
    return Number(rows[0]?.end);
  }

  before(async () => {
    b = await secondInstance(a.service, { ...SETTINGS, LOG_LEVEL: 'info' }, { logTo: log.stream });
    // Both instances see each other (the fallback's share divides by the live instances).
    await a.service.running.app.get(InstanceRegistry).heartbeat();
  });
  after(async () => {
    await b?.close();
  });

  it('serves at most the limit, and at least the limit less one unit, of reads alternated over two instances', async () => {
    await roomInRateWindow(20);
    const { id, key } = await a.make.organiser();
    const apis = [a.api, publicApi(b)];
    let served = 0;
    let refused: HttpResult | undefined;
    for (let request = 0; request < LIMIT * 3; request += 1) {
      const result = await apis[request % 2]!('GET', '/v1/me', { key });
      if (result.status === 200) served += 1;
      else {
        assert.equal(result.status, 429, result.text);
        refused ??= result;
      }
    }
    assert.ok(served <= LIMIT, `served ${served} of ${LIMIT}`);
    assert.ok(served >= LIMIT - 1, `served ${served} of ${LIMIT}`);
    assert.equal(refused?.headers.get('x-ratelimit-remaining'), '0');
    const { rows } = await a.db.query<{ used: number }>(`SELECT used FROM rate_limit_counter WHERE key = $1`, [
      `reads:organiser:${id}`,
    ]);
    assert.equal(rows[0]?.used, LIMIT, 'the counter granted the whole budget and not one unit more');
  });

  it('ends windows where the database clock ends them: X-RateLimit-Reset and Retry-After from the database window end, on both instances', async () => {
    await roomInRateWindow(10);
    const { key } = await a.make.organiser();
    const end = await databaseWindowEnd();
    for (const api of [a.api, publicApi(b)]) {
      const result = await api('GET', '/v1/me', { key });
      assert.equal(result.status, 200, result.text);
      assert.equal(Number(result.headers.get('x-ratelimit-reset')), end);
    }
    let refused: HttpResult | undefined;
    for (let request = 0; request < LIMIT * 2 && refused === undefined; request += 1) {
      const result = await a.api('GET', '/v1/me', { key });
      if (result.status === 429) refused = result;
    }
    assert.ok(refused !== undefined, 'the budget ran out');
    assert.equal(Number(refused.headers.get('x-ratelimit-reset')), end);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Math.abs(end - Date.now() / 1000 - retryAfter) <= 1.5, `retry-after ${retryAfter}`);
  });

  it('agrees with the database on the window end when its own clock runs 37 seconds ahead', async () => {
    await roomInRateWindow(10);
    const skewed = new DatabaseBudgetStorage(
      a.service.running.app.get(Database),
      { liveApiInstances: () => 2 },
      60,
      () => Date.now() + 37_000,
    );
    const end = await databaseWindowEnd();
    const first = await skewed.incrementNow('reads:organiser:skewed', 60_000, LIMIT);
    assert.equal(first.resetAtSeconds, end);
    // Served from its reservation, in the same turn, still on the database's window.
    const second = skewed.incrementNow('reads:organiser:skewed', 60_000, LIMIT);
    assert.ok(!(second instanceof Promise), 'a reserved unit is served without a promise');
    assert.equal(second.resetAtSeconds, end);
    assert.ok(Math.abs(end - Date.now() / 1000 - second.timeToExpire) <= 1.5, `expires in ${second.timeToExpire} s`);
  });

  it('grants concurrent requests of one instance from shared reservations, never past the limit', async () => {
    await roomInRateWindow(10);
    const store = new DatabaseBudgetStorage(a.service.running.app.get(Database), { liveApiInstances: () => 2 }, 60);
    const counted = await Promise.all(
      Array.from({ length: LIMIT * 2 }, () =>
        Promise.resolve(store.incrementNow('reads:organiser:concurrent', 60_000, LIMIT)),
      ),
    );
    assert.equal(counted.filter((hit) => !hit.isBlocked).length, LIMIT);
    const { rows } = await a.db.query<{ used: number }>(
      `SELECT used FROM rate_limit_counter WHERE key = 'reads:organiser:concurrent'`,
    );
    assert.equal(rows[0]?.used, LIMIT);
  });

  it('warns at start that RATE_LIMIT_STORE=memory counts alone when other instances serve the API on its database', async () => {
    const warning = (): number =>
      log.lines.filter((line) => String(line['msg']).startsWith('RATE_LIMIT_STORE=memory counts this instance')).length;
    const before = warning();
    const alone = await secondInstance(
      a.service,
      { ...SETTINGS, RATE_LIMIT_STORE: 'memory', LOG_LEVEL: 'info' },
      { logTo: log.stream },
    );
    try {
      assert.equal(warning(), before + 1);
      await alone.running.app.get(InstanceRegistry).heartbeat();
      assert.equal(warning(), before + 1, 'said once');
    } finally {
      await alone.close();
    }
  });

  it('falls back to its share of the budget (the limit over the live instances, never unlimited) when the counter is unreachable, logs it once and counts it', async () => {
    await roomInRateWindow(15);
    const { key } = await a.make.organiser();
    const fallbacksBefore = await metric(a.service, 'rate_limit_store_fallbacks_total');
    // A worker serves no request of any account: the share is over the two instances that do.
    const worker = await workerInstance(a.service, { ...SETTINGS, LOG_LEVEL: 'info' }, { logTo: log.stream });
    await a.service.running.app.get(InstanceRegistry).heartbeat();
    const share = Math.floor(LIMIT / 2);
    await a.db.query('ALTER TABLE rate_limit_counter RENAME TO rate_limit_counter_away');
    try {
      let served = 0;
      let refused: HttpResult | undefined;
      for (let request = 0; request < LIMIT * 2; request += 1) {
        const result = await a.api('GET', '/v1/me', { key });
        if (result.status === 200) served += 1;
        else refused ??= result;
      }
      assert.equal(served, share, `served ${served}; its share is ${share} of ${LIMIT}`);
      assert.equal(refused?.status, 429);
      assert.match(
        (refused?.body as { message: string } | undefined)?.message ?? '',
        new RegExp(`share \\(${share}\\) of the account's reads budget`),
      );
      assert.match(refused?.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(await metric(a.service, 'rate_limit_store_fallbacks_total'), fallbacksBefore + 1);
      assert.equal(await metric(a.service, 'rate_limit_store_fallback'), 1);
    } finally {
      await a.db.query('ALTER TABLE rate_limit_counter_away RENAME TO rate_limit_counter');
      await worker.close();
    }
    await sleep(FALLBACK_RETRY_MS + 100);
    const { key: other } = await a.make.organiser();
    const shared = await a.api('GET', '/v1/me', { key: other });
    assert.equal(shared.status, 200, shared.text);
    assert.equal(await metric(a.service, 'rate_limit_store_fallback'), 0);
    const lines = log.lines.map((line) => String(line['msg']));
    assert.equal(lines.filter((msg) => msg.includes('rate-limit counter is unreachable')).length, 1);
    assert.equal(lines.filter((msg) => msg.includes('rate-limit counter is reachable again')).length, 1);
  });
});
