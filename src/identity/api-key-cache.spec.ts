import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActiveKey } from './api-key.repository';
import { ApiKeyCache } from './api-key-cache';

function keyOf(id: string): ActiveKey {
  return {
    id,
    principalType: 'organiser',
    principalId: 'org_1',
    scopes: ['events:read'],
    keyPrefix: 'svc_live_abcdef…',
  };
}

/** A cache on a hand-driven clock, trusted from the start unless told, with a loader that counts its reads. */
function setUp(options: { maxEntries?: number; ttlMs?: number; trusted?: boolean } = {}) {
  const clock = { now: 1_000 };
  const cache = new ApiKeyCache({
    maxEntries: options.maxEntries ?? 100,
    ttlMs: options.ttlMs ?? 60_000,
    trustWindowMs: 800,
    now: () => clock.now,
  });
  if (options.trusted ?? true) cache.confirmFreshAsOf(clock.now);
  const reads: string[] = [];
  const load = async (hash: string): Promise<ActiveKey | null> => {
    reads.push(hash);
    return hash.startsWith('unknown') ? null : keyOf(`key_${hash}`);
  };
  return { cache, clock, reads, load };
}

describe('ApiKeyCache', () => {
  it('serves a found key from memory on the next lookup while trusted', async () => {
    const { cache, reads, load } = setUp();
    const first = await cache.lookup('h1', load);
    const second = await cache.lookup('h1', load);
    assert.deepEqual(second, first);
    assert.deepEqual(reads, ['h1']);
  });

  it('reads a key once for concurrent lookups while trusted, and a lookup that joined a read before an eviction reads again', async () => {
    const { cache, reads, load } = setUp();
    const burst = await Promise.all(Array.from({ length: 50 }, () => Promise.resolve(cache.lookup('h1', load))));
    assert.deepEqual(reads, ['h1'], 'one read for the burst');
    assert.ok(burst.every((key) => key?.id === 'key_h1'));

    const first = Promise.resolve(cache.lookup('h2', load));
    const joinedBeforeEviction = Promise.resolve(cache.lookup('h2', load));
    cache.evict('h2');
    await Promise.all([first, joinedBeforeEviction]);
    assert.deepEqual(reads, ['h1', 'h2', 'h2'], 'the joined lookup read again after the eviction');
  });

  it('joins no read while not trusted: every lookup reads the database', async () => {
    const { cache, reads, load } = setUp({ trusted: false });
    await Promise.all([Promise.resolve(cache.lookup('h1', load)), Promise.resolve(cache.lookup('h1', load))]);
    assert.deepEqual(reads, ['h1', 'h1']);
  });

  it('answers a cached key in the same turn, without a promise (every request with a known key)', async () => {
    const { cache, load } = setUp();
    assert.ok(cache.lookup('h1', load) instanceof Promise, 'the first lookup reads the database');
    await cache.lookup('h1', load);
    const cached = cache.lookup('h1', load);
    assert.ok(!(cached instanceof Promise));
    assert.equal(cached.id, 'key_h1');
  });

  it('never caches a miss, so a key minted elsewhere works at once', async () => {
    const { cache, reads, load } = setUp();
    assert.equal(await cache.lookup('unknown-1', load), null);
    assert.equal(await cache.lookup('unknown-1', load), null);
    assert.deepEqual(reads, ['unknown-1', 'unknown-1']);
    assert.equal(cache.size, 0);
  });

  it('trust window: reads the database once the last proof of freshness is older than the window', async () => {
    const { cache, clock, reads, load } = setUp();
    await cache.lookup('h1', load);
    clock.now += 799;
    await cache.lookup('h1', load);
    assert.equal(reads.length, 1, 'within the window the entry is served');
    clock.now += 1;
    assert.equal(cache.isTrusted(), false);
    await cache.lookup('h1', load);
    assert.equal(reads.length, 2, 'past the window every lookup reads the database');
    cache.confirmFreshAsOf(clock.now - 100);
    await cache.lookup('h1', load);
    assert.equal(reads.length, 2, 'a new heartbeat renews the trust, counted from when it was sent');
  });

  it('trust window: a proof of freshness never moves the window back', () => {
    const { cache, clock } = setUp();
    cache.confirmFreshAsOf(clock.now - 5_000);
    assert.equal(cache.isTrusted(), true);
  });

  it('trust window: never trusted before the first heartbeat, and not after distrust', async () => {
    const { cache, reads, load } = setUp({ trusted: false });
    await cache.lookup('h1', load);
    await cache.lookup('h1', load);
    assert.equal(reads.length, 2);
    cache.confirmFreshAsOf(1_000);
    await cache.lookup('h1', load);
    assert.equal(reads.length, 2);
    cache.distrust();
    await cache.lookup('h1', load);
    assert.equal(reads.length, 3);
  });

  it('eviction: the next lookup of an evicted key reads the database', async () => {
    const { cache, reads, load } = setUp();
    await cache.lookup('h1', load);
    await cache.lookup('h2', load);
    cache.evict('h1');
    assert.equal(cache.holds('h1'), false);
    assert.equal(cache.holds('h2'), true);
    await cache.lookup('h1', load);
    assert.deepEqual(reads, ['h1', 'h2', 'h1']);
  });

  it('generation: a lookup that read the database before an eviction does not store its stale row', async () => {
    const { cache, reads } = setUp();
    let release: (key: ActiveKey) => void = () => undefined;
    const slowRead = (hash: string) =>
      new Promise<ActiveKey | null>((resolve) => {
        reads.push(hash);
        release = resolve;
      });
    const racing = cache.lookup('h1', slowRead);
    cache.evict('h1'); // the revocation's notification arrives while the row is on its way
    release(keyOf('key_h1'));
    assert.equal((await racing)?.id, 'key_h1', 'the request that started first is answered as it began');
    assert.equal(cache.holds('h1'), false, 'but its row is not remembered');
  });

  it('generation: a clear (listener reconnected) during a lookup keeps its row out too', async () => {
    const { cache } = setUp();
    let release: (key: ActiveKey) => void = () => undefined;
    const racing = cache.lookup('h1', () => new Promise<ActiveKey | null>((resolve) => (release = resolve)));
    cache.clear();
    release(keyOf('key_h1'));
    await racing;
    assert.equal(cache.holds('h1'), false);
  });

  it('bound: holds at most maxEntries, dropping the least recently used', async () => {
    const { cache, load } = setUp({ maxEntries: 2 });
    await cache.lookup('h1', load);
    await cache.lookup('h2', load);
    await cache.lookup('h1', load); // h1 is now the most recently used
    await cache.lookup('h3', load);
    assert.equal(cache.size, 2);
    assert.equal(cache.holds('h1'), true);
    assert.equal(cache.holds('h2'), false);
    assert.equal(cache.holds('h3'), true);
  });

  it('ttl: an entry older than the ttl is read again even without a notification', async () => {
    const { cache, clock, reads, load } = setUp({ ttlMs: 500 });
    await cache.lookup('h1', load);
    clock.now += 501;
    cache.confirmFreshAsOf(clock.now);
    await cache.lookup('h1', load);
    assert.equal(reads.length, 2);
  });

  it('maxEntries 0 turns the cache off: every lookup reads the database', async () => {
    const { cache, reads, load } = setUp({ maxEntries: 0 });
    assert.equal(cache.enabled, false);
    await cache.lookup('h1', load);
    await cache.lookup('h1', load);
    assert.equal(reads.length, 2);
  });

  it('cached keys are frozen: one request cannot change what the next one is allowed', async () => {
    const { cache, load } = setUp();
    const key = await cache.lookup('h1', load);
    assert.ok(key !== null && Object.isFrozen(key) && Object.isFrozen(key.scopes));
  });
});
