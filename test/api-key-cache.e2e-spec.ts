import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { displayPrefixOf, generateApiKey, hashApiKey } from '../libs/keys/api-key-format';
import { ApiKeyRepository } from '../src/identity/api-key.repository';
import { API_KEY_STALENESS_BOUND_MS, ApiKeyCache } from '../src/identity/api-key-cache';
import { NotificationHub } from '../src/database/notifications/notification-hub';
import { API_KEY_CHANGED_CHANNEL } from '../src/identity/api-key-revocations.listener';
import { assertErrorBody } from './support/error-body';
import { publicApi, type HttpResult } from './support/http-client';
import { ops, opsEnvFor } from './support/ops-cli';
import { secondInstance } from './support/second-instance';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

interface MintedKey {
  id: string;
  key: string;
  hash: string;
}

const cacheOf = (service: TestService) => service.running.app.get(ApiKeyCache);
/** The instance's one notification connection, which carries the key changes. */
const listenerOf = (service: TestService) => service.running.app.get(NotificationHub);

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Two instances on one database, as behind a load balancer: A (withApp) and
 * B. Keys are revoked through A (or the CLI, or plain SQL) and used on B,
 * whose cache holds them; B must refuse within API_KEY_STALENESS_BOUND_MS.
 */
describe('API key cache across instances (revocations via LISTEN/NOTIFY)', () => {
  // Reads are polled back to back while waiting for a refusal; the account budget must not be what answers.
  const a = withApp({ RATE_LIMIT_READS: '100000' });
  let b: TestService;
  let apiB: ReturnType<typeof publicApi>;
  let organiserId: string;

  before(async () => {
    b = await secondInstance(a.service, { RATE_LIMIT_READS: '100000' });
    apiB = publicApi(b);
    organiserId = (await a.make.organiser()).id;
  });
  after(async () => {
    await b?.close();
  });

  async function mint(scopes: string[] = ['events:read', 'orders:read'], owner = organiserId): Promise<MintedKey> {
    const minted = await a.admin('POST', '/internal/keys', {
      body: { principal: { type: 'organiser', id: owner }, scopes, actorRole: 'owner' },
    });
    assert.equal(minted.status, 201, minted.text);
    const key = minted.body.data.key as string;
    return { id: minted.body.data.id as string, key, hash: hashApiKey(key) };
  }

  /** Uses the key on B until B holds it in a cache it trusts (so a refusal cannot come from a plain read). */
  async function cachedOnB(key: MintedKey): Promise<void> {
    await waitFor('B to trust its cache', () => cacheOf(b).isTrusted());
    const served = await apiB('GET', '/v1/me', { key: key.key });
    assert.equal(served.status, 200, served.text);
    assert.ok(cacheOf(b).holds(key.hash), 'B remembers the key');
  }

  /** Asks B with the key back to back until it refuses; the time from `since` to that refusal. */
  async function untilRefusedByB(key: MintedKey, since: number): Promise<{ refusal: HttpResult; elapsedMs: number }> {
    for (;;) {
      const result = await apiB('GET', '/v1/me', { key: key.key });
      if (result.status !== 200) return { refusal: result, elapsedMs: performance.now() - since };
      if (performance.now() - since > 5_000) assert.fail('B still serves the revoked key after 5 s');
    }
  }

  async function revokeThroughA(key: MintedKey): Promise<number> {
    const revoked = await a.admin('DELETE', `/internal/keys/${key.id}`);
    assert.equal(revoked.status, 200, revoked.text);
    return performance.now();
  }

  function report(t: TestContext, label: string, elapsedMs: number): void {
    t.diagnostic(`${label}: B refused ${elapsedMs.toFixed(1)} ms after the revoke's response`);
  }

  it('a revoke through instance A is refused by instance B within the bound (401, contract body)', async (t) => {
    const key = await mint();
    await cachedOnB(key);
    const revokedAt = await revokeThroughA(key);
    const { refusal, elapsedMs } = await untilRefusedByB(key, revokedAt);
    report(t, 'listener connected', elapsedMs);
    assertErrorBody(refusal, 401, 'unauthorized');
    assert.ok(elapsedMs <= API_KEY_STALENESS_BOUND_MS, `${elapsedMs} ms`);
    assert.equal(cacheOf(b).holds(key.hash), false);
  });

  it('the revoking instance refuses the key from the very next request', async () => {
    const key = await mint();
    await waitFor('A to trust its cache', () => cacheOf(a.service).isTrusted());
    assert.equal((await a.api('GET', '/v1/me', { key: key.key })).status, 200);
    assert.ok(cacheOf(a.service).holds(key.hash));
    await revokeThroughA(key);
    assertErrorBody(await a.api('GET', '/v1/me', { key: key.key }), 401, 'unauthorized');
  });

  it("B's listening connection killed from the database side: B refuses within the bound, then listens again", async (t) => {
    const key = await mint();
    await cachedOnB(key);
    const pid = listenerOf(b).backendPid;
    assert.ok(pid !== null);
    const killed = await a.db.query('SELECT pg_terminate_backend($1) AS killed', [pid]);
    assert.equal(killed.rows[0].killed, true);
    const revokedAt = await revokeThroughA(key);
    const { refusal, elapsedMs } = await untilRefusedByB(key, revokedAt);
    report(t, 'listener killed by pg_terminate_backend', elapsedMs);
    assertErrorBody(refusal, 401, 'unauthorized');
    assert.ok(elapsedMs <= API_KEY_STALENESS_BOUND_MS, `${elapsedMs} ms`);

    // After the reconnect the cache serves again, and revocations reach it again.
    await waitFor('the listener to reconnect', () => (listenerOf(b).backendPid ?? pid) !== pid);
    const next = await mint();
    await cachedOnB(next);
    const again = await untilRefusedByB(next, await revokeThroughA(next));
    report(t, 'after the reconnect', again.elapsedMs);
    assert.ok(again.elapsedMs <= API_KEY_STALENESS_BOUND_MS, `${again.elapsedMs} ms`);
  });

  it("B's listening connection half-open (its backend frozen): B stops trusting its cache within the bound, then reconnects", async (t) => {
    const key = await mint();
    const bystander = await mint();
    await cachedOnB(key);
    await cachedOnB(bystander);
    const pid = listenerOf(b).backendPid;
    assert.ok(pid !== null);
    // SIGSTOP keeps the TCP connection open while nothing comes back: a half-open connection as B sees it.
    process.kill(pid, 'SIGSTOP');
    const thaw = setTimeout(() => process.kill(pid, 'SIGCONT'), 8_000);
    try {
      const revokedAt = await revokeThroughA(key);
      const { refusal, elapsedMs } = await untilRefusedByB(key, revokedAt);
      report(t, 'listener half-open', elapsedMs);
      assertErrorBody(refusal, 401, 'unauthorized');
      assert.ok(elapsedMs <= API_KEY_STALENESS_BOUND_MS, `${elapsedMs} ms`);
      // A connection silent for 3 s is given up and made again, while the old backend is still frozen.
      await waitFor('a new listening connection', () => (listenerOf(b).backendPid ?? pid) !== pid, 6_000);
      assert.equal(
        cacheOf(b).holds(bystander.hash),
        false,
        'notifications may have been missed: the cache starts empty',
      );
    } finally {
      clearTimeout(thaw);
      process.kill(pid, 'SIGCONT');
    }
    await waitFor('B to trust its cache again', () => cacheOf(b).isTrusted());
  });

  it('a rolled-back revoke does not evict the key anywhere', async () => {
    const key = await mint();
    await cachedOnB(key);
    await a.db.query('BEGIN');
    try {
      await a.db.query('UPDATE api_key SET revoked_at = now() WHERE id = $1', [key.id]);
      await sleep(300);
      assert.ok(cacheOf(b).holds(key.hash), 'nothing is sent before commit');
    } finally {
      await a.db.query('ROLLBACK');
    }
    await sleep(300);
    assert.ok(cacheOf(b).holds(key.hash), 'nor after a rollback');
    assert.equal((await apiB('GET', '/v1/me', { key: key.key })).status, 200);
  });

  it('a revoke by plain SQL (any path that updates the row) evicts on every instance', async (t) => {
    const key = await mint();
    await cachedOnB(key);
    await a.db.query('UPDATE api_key SET revoked_at = now() WHERE id = $1', [key.id]);
    const { refusal, elapsedMs } = await untilRefusedByB(key, performance.now());
    report(t, 'plain SQL revoke', elapsedMs);
    assertErrorBody(refusal, 401, 'unauthorized');
    assert.ok(elapsedMs <= API_KEY_STALENESS_BOUND_MS, `${elapsedMs} ms`);
  });

  it('a revoke through the CLI (npm run ops -- keys:revoke) is refused by a running instance within the bound', async (t) => {
    const key = await mint();
    await cachedOnB(key);
    const revoked = await ops(['keys:revoke', '--key', key.id, '--role', 'owner'], opsEnvFor(a.service));
    assert.equal(revoked.code, 0, revoked.stderr);
    const { refusal, elapsedMs } = await untilRefusedByB(key, performance.now());
    report(t, 'CLI revoke', elapsedMs);
    assertErrorBody(refusal, 401, 'unauthorized');
    assert.ok(elapsedMs <= API_KEY_STALENESS_BOUND_MS, `${elapsedMs} ms`);
  });

  it("a change of a key's scopes reaches a cached key: B answers 403 for the scope taken away", async () => {
    const key = await mint(['events:read', 'orders:read']);
    await cachedOnB(key);
    assert.equal((await apiB('GET', '/v1/orders', { key: key.key })).status, 200);
    await a.db.query(`UPDATE api_key SET scopes = '{events:read}' WHERE id = $1`, [key.id]);
    await waitFor('B to evict the key', () => !cacheOf(b).holds(key.hash), API_KEY_STALENESS_BOUND_MS);
    assertErrorBody(await apiB('GET', '/v1/orders', { key: key.key }), 403, 'insufficient_scope');
  });

  it('a key minted on A works at once on B (misses are never cached)', async () => {
    // A well-formed key that is not stored yet: B looks it up in the database, and finds nothing.
    const key = generateApiKey();
    await waitFor('B to trust its cache', () => cacheOf(b).isTrusted());
    assertErrorBody(await apiB('GET', '/v1/me', { key }), 401, 'unauthorized');
    // Stored as minting stores a key (the repository's insert, which notifies no instance).
    await a.service.running.app.get(ApiKeyRepository).insert({
      id: 'key_stored_after_a_miss',
      keyHash: hashApiKey(key),
      keyPrefix: displayPrefixOf(key),
      principalType: 'organiser',
      principalId: organiserId,
      scopes: ['events:read'],
      name: null,
      createdByRole: 'owner',
    });
    const served = await apiB('GET', '/v1/me', { key });
    assert.equal(served.status, 200, served.text);
  });

  it('a key served from the cache gets the same headers, request id and rate-limit count as one read from the database', async () => {
    // An account of its own: no other instance holds units of its budget, so B's count moves by one unit per read
    // (the other tests' reads on A and B would have B ask ahead for a block, which also counts A's reservations).
    const key = await mint(undefined, (await a.make.organiser()).id);
    await waitFor('B to trust its cache', () => cacheOf(b).isTrusted());
    const fromDatabase = await apiB('GET', '/v1/me', { key: key.key, headers: { 'x-request-id': 'first-read' } });
    assert.ok(cacheOf(b).holds(key.hash));
    const fromCache = await apiB('GET', '/v1/me', { key: key.key, headers: { 'x-request-id': 'cached-read' } });
    assert.equal(fromCache.status, 200);
    assert.deepEqual([...fromCache.headers.keys()].sort(), [...fromDatabase.headers.keys()].sort());
    assert.equal(fromCache.headers.get('x-request-id'), 'cached-read');
    assert.equal(
      Number(fromCache.headers.get('x-ratelimit-remaining')),
      Number(fromDatabase.headers.get('x-ratelimit-remaining')) - 1,
    );
    assert.deepEqual(fromCache.body, fromDatabase.body);
  });

  it('closing an instance closes its listening connection', async () => {
    const c = await secondInstance(a.service);
    await waitFor('C to listen', () => listenerOf(c).backendPid !== null);
    const pid = listenerOf(c).backendPid;
    await c.close();
    const backends = async () => (await a.db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount;
    await waitFor('its backend to end', async () => (await backends()) === 0, 2_000);
  });
});

describe('API key cache turned off (API_KEY_CACHE_MAX_ENTRIES=0)', () => {
  // An `api` instance: the delivery worker, which would listen for its wake-ups, runs elsewhere.
  const app = withApp({ API_KEY_CACHE_MAX_ENTRIES: '0', SERVICE_ROLE: 'api' });

  it('reads every key from the database and opens no listening connection', async () => {
    const organiser = await app.make.organiser();
    assert.equal((await app.api('GET', '/v1/me', { key: organiser.key })).status, 200);
    assert.equal(cacheOf(app.service).size, 0);
    assert.equal(listenerOf(app.service).backendPid, null);
    assert.equal(listenerOf(app.service).channels.includes(API_KEY_CHANGED_CHANNEL), false);
  });
});
