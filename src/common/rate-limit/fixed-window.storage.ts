import { Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What @nestjs/throttler's storage answers for one counted hit. */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** A counted hit; `resetAtSeconds` is the window's end (unix seconds) when the store knows it on its own clock. */
export type CountedHit = ThrottlerStorageRecord & {
  resetAtSeconds?: number;
  /** Set while a shared store is out of reach: the part of the budget this instance counts alone. */
  localShare?: number;
};

/**
 * A counter store that counts a hit in the same turn when it can. The account
 * budget guard uses `incrementNow` when the store has it, so a request costs
 * no promise for its budget: the memory store always answers at once, the
 * database store at once from its reserved units and with a promise when it
 * must reserve more. A store with only the library's asynchronous `increment`
 * is awaited instead.
 */
export interface CountingStorage extends ThrottlerStorage {
  incrementNow(key: string, ttl: number, limit: number): CountedHit | Promise<CountedHit>;
}

export function countsImmediately(storage: ThrottlerStorage): storage is CountingStorage {
  return typeof (storage as Partial<CountingStorage>).incrementNow === 'function';
}

interface WindowCounter {
  windowStart: number;
  hits: number;
}

/**
 * Fixed windows aligned to the clock (each minute starts at a multiple of the
 * window length), so `X-RateLimit-Reset` is the same for all keys of an
 * account. Counters are kept in memory, for this instance alone
 * (RATE_LIMIT_STORE=memory); database-budget.storage.ts shares budgets among
 * instances.
 */
@Injectable()
export class FixedWindowThrottlerStorage implements CountingStorage {
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

  /** The hits counted so far in the current window, without counting one; `resetAtSeconds` is the window's end. */
  peek(key: string, ttl: number): { hits: number; secondsLeft: number; resetAtSeconds: number } {
    const now = this.now();
    const windowStart = Math.floor(now / ttl) * ttl;
    const counter = this.counters.get(key);
    const hits = counter !== undefined && counter.windowStart === windowStart ? counter.hits : 0;
    return {
      hits,
      secondsLeft: Math.ceil((windowStart + ttl - now) / 1000),
      resetAtSeconds: Math.ceil((windowStart + ttl) / 1000),
    };
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
