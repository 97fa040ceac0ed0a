import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';

describe('FixedWindowThrottlerStorage', () => {
  it('counts hits per key within a window aligned to the clock and blocks past the limit', async () => {
    let now = 60_000 * 1000 + 15_000;
    const storage = new FixedWindowThrottlerStorage(() => now);
    const first = await storage.increment('reads:a', 60_000, 2, 60_000, 'reads');
    assert.deepEqual(first, { totalHits: 1, timeToExpire: 45, isBlocked: false, timeToBlockExpire: 45 });
    await storage.increment('reads:a', 60_000, 2, 60_000, 'reads');
    const third = await storage.increment('reads:a', 60_000, 2, 60_000, 'reads');
    assert.equal(third.isBlocked, true);
    assert.equal((await storage.increment('reads:b', 60_000, 2, 60_000, 'reads')).totalHits, 1);
    now += 45_000;
    const nextWindow = await storage.increment('reads:a', 60_000, 2, 60_000, 'reads');
    assert.deepEqual(nextWindow, { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 60 });
  });
});
