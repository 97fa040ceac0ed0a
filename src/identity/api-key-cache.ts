import { LRUCache } from 'lru-cache';
import type { ActiveKey } from './api-key.repository';

export interface ApiKeyCacheOptions {
  /** Entries kept at most (least recently used go first); 0 turns the cache off. */
  maxEntries: number;
  /** Age after which an entry is read again even if nothing said it changed: a backstop, not the mechanism. */
  ttlMs: number;
  /** How long a proof of freshness lasts (see `confirmFreshAsOf`). */
  trustWindowMs: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

/** The promise: a revoked key is refused by every instance within this long of its revocation's commit. */
export const API_KEY_STALENESS_BOUND_MS = 1_000;

/**
 * Shorter than the bound by the time a request may take between its trust
 * check and its answer, with room for a heavily loaded machine; heartbeats
 * come several times per window, so a live listener renews the trust long
 * before it runs out.
 */
export const API_KEY_CACHE_TRUST_WINDOW_MS = 600;

/** A backstop only (notifications evict at once): a path that bypassed the triggers is bounded too. */
export const API_KEY_CACHE_TTL_MS = 60_000;

/**
 * Successful key lookups by key hash (never the token), so a request with a
 * known key costs no database round trip. Three rules keep that from ever
 * letting a revoked key through for longer than the staleness bound:
 *
 * - Trust window: entries are served only while the revocations listener has
 *   proven, within `trustWindowMs`, that every change committed before its
 *   last heartbeat has been applied here. Otherwise every lookup reads the
 *   database (and the listener clears the cache when it reconnects, since
 *   notifications were missed meanwhile).
 * - Generation: a lookup that read the database before a revocation must not
 *   store its now stale row after the eviction. Every eviction or clear bumps
 *   the generation; a lookup stores only if none happened while it read.
 * - Misses are never stored, so a key minted on another instance works at once.
 */
export class ApiKeyCache {
  private readonly entries: LRUCache<string, ActiveKey> | null;
  private readonly trustWindowMs: number;
  private readonly now: () => number;
  private generation = 0;
  /** Reads of the database in flight, by key hash, which concurrent lookups join. */
  private readonly reading = new Map<string, Promise<ActiveKey | null>>();
  private trustedUntil = Number.NEGATIVE_INFINITY;

  constructor(options: ApiKeyCacheOptions) {
    this.now = options.now ?? (() => performance.now());
    const perf = { now: this.now };
    this.entries = options.maxEntries > 0 ? new LRUCache({ max: options.maxEntries, ttl: options.ttlMs, perf }) : null;
    this.trustWindowMs = options.trustWindowMs;
  }

  get enabled(): boolean {
    return this.entries !== null;
  }

  /**
   * The active key of `keyHash`: from the cache while it is trusted, else from
   * `load` (remembered if found). A cached key is answered in the same turn,
   * not through a promise: that is nearly every request's path.
   */
  lookup(keyHash: string, load: (keyHash: string) => Promise<ActiveKey | null>): ActiveKey | Promise<ActiveKey | null> {
    if (this.entries === null) return load(keyHash);
    if (this.isTrusted()) {
      const cached = this.entries.get(keyHash);
      if (cached !== undefined) return cached;
      const reading = this.reading.get(keyHash);
      if (reading !== undefined) return this.joined(reading, keyHash, load);
    }
    return this.loadAndRemember(this.entries, keyHash, load);
  }

  private async loadAndRemember(
    entries: LRUCache<string, ActiveKey>,
    keyHash: string,
    load: (keyHash: string) => Promise<ActiveKey | null>,
  ): Promise<ActiveKey | null> {
    const generation = this.generation;
    const reading = load(keyHash);
    this.reading.set(keyHash, reading);
    let key: ActiveKey | null;
    try {
      key = await reading;
    } finally {
      if (this.reading.get(keyHash) === reading) this.reading.delete(keyHash);
    }
    // Frozen: one object now serves many requests, none may change it for the others.
    if (key !== null && generation === this.generation) entries.set(keyHash, deepFrozen(key));
    return key;
  }

  /**
   * A lookup that found the same key being read already waits for that read
   * rather than sending its own (a burst with a key not yet cached reads it
   * once). Only while trusted, where a revocation evicts; and if anything was
   * evicted meanwhile, it looks up again, so it never takes a row older than
   * an eviction it came after.
   */
  private async joined(
    reading: Promise<ActiveKey | null>,
    keyHash: string,
    load: (keyHash: string) => Promise<ActiveKey | null>,
  ): Promise<ActiveKey | null> {
    const generation = this.generation;
    const key = await reading;
    return generation === this.generation ? key : this.lookup(keyHash, load);
  }

  /** The key of `keyHash` changed (revoked, new scopes, deleted): forget it, and any lookup reading it now. */
  evict(keyHash: string): void {
    this.generation += 1;
    this.entries?.delete(keyHash);
    this.reading.delete(keyHash);
  }

  /** Forget everything, and any lookup reading now (notifications may have been missed). */
  clear(): void {
    this.generation += 1;
    this.entries?.clear();
    this.reading.clear();
  }

  /**
   * Every change committed before `sentAt` (a monotonic time taken before a
   * heartbeat was sent) has been applied: entries may be served until
   * `sentAt + trustWindowMs`.
   */
  confirmFreshAsOf(sentAt: number): void {
    this.trustedUntil = Math.max(this.trustedUntil, sentAt + this.trustWindowMs);
  }

  /** The listener lost its connection: serve nothing from memory until it proves itself again. */
  distrust(): void {
    this.trustedUntil = Number.NEGATIVE_INFINITY;
  }

  isTrusted(): boolean {
    return this.now() < this.trustedUntil;
  }

  /** Whether an entry for `keyHash` is held (without touching its recency); for diagnostics and tests. */
  holds(keyHash: string): boolean {
    return this.entries?.has(keyHash) ?? false;
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }
}

function deepFrozen(key: ActiveKey): ActiveKey {
  Object.freeze(key.scopes);
  return Object.freeze(key);
}
