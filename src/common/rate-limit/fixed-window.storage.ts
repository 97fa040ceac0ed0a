import { Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What @nestjs/throttler's storage answers for one counted hit. */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * A counter store that counts a hit in the same turn. The account budget
 * guard uses `incrementNow` when the store has it, so a request costs no
 * promise for its budget; a shared store (Redis, PostgreSQL) implements only
 * the library's asynchronous `increment`, and the guard awaits that instead.
 */
export interface ImmediateThrottlerStorage extends ThrottlerStorage {
  incrementNow(key: string, ttl: number, limit: number): ThrottlerStorageRecord;
}

export function countsImmediately(storage: ThrottlerStorage): storage is ImmediateThrottlerStorage {
  return typeof (storage as Partial<ImmediateThrottlerStorage>).incrementNow === 'function';
}

interface WindowCounter {
  windowStart: number;
  hits: number;
}

/**
 * Fixed windows aligned to the clock (each minute starts at a multiple of the
 * window length), so every instance agrees on when a window resets and
 * `X-RateLimit-Reset` is the same for all keys of an account. Counters are
 * kept in memory; a shared store (Redis, PostgreSQL) can replace this class
 * behind @nestjs/throttler's `ThrottlerStorage` interface when several
 * instances serve one account.
 */
@Injectable()
export class FixedWindowThrottlerStorage implements ImmediateThrottlerStorage {
  private readonly counters = new Map<string, WindowCounter>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    _throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    return Promise.resolve(this.incrementNow(key, ttl, limit));
  }

  incrementNow(key: string, ttl: number, limit: number): ThrottlerStorageRecord {
    const now = this.now();
    const windowStart = Math.floor(now / ttl) * ttl;
    this.sweep(windowStart);
    let counter = this.counters.get(key);
    if (counter === undefined || counter.windowStart !== windowStart) {
      counter = { windowStart, hits: 0 };
      this.counters.set(key, counter);
    }
    counter.hits += 1;
    const secondsLeft = Math.ceil((windowStart + ttl - now) / 1000);
    const blocked = counter.hits > limit;
    return { totalHits: counter.hits, timeToExpire: secondsLeft, isBlocked: blocked, timeToBlockExpire: secondsLeft };
  }

  /** The hits counted so far in the current window, without counting one. */
  peek(key: string, ttl: number): { hits: number; secondsLeft: number } {
    const now = this.now();
    const windowStart = Math.floor(now / ttl) * ttl;
    const counter = this.counters.get(key);
    const hits = counter !== undefined && counter.windowStart === windowStart ? counter.hits : 0;
    return { hits, secondsLeft: Math.ceil((windowStart + ttl - now) / 1000) };
  }

  /** Forget counters of past windows, at most once per window. */
  private sweep(windowStart: number): void {
    if (windowStart === this.lastSweep) return;
    this.lastSweep = windowStart;
    for (const [key, counter] of this.counters) {
      if (counter.windowStart < windowStart) this.counters.delete(key);
    }
  }
}
