import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import type { Listener } from '../http/listener';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';

/**
 * A per-client budget for failed requests (internal-api.md,
 * `RATE_LIMIT_FAILURES_PER_CLIENT`): answers of `401` and requests for a
 * route that does not exist count against the client's address; past the
 * limit, every request of that address gets `429 rate_limited` until the
 * fixed window ends. It is checked before a key is looked up or a body read,
 * so guessing keys or probing paths costs the sender and not the database.
 *
 * Each listener counts on its own: the internal API has no rate limit of the
 * public API's, so a public client that spends its failures (a misconfigured
 * integration behind the operators' own NAT, a test rig on loopback) cannot
 * lock the operators out of the admin listener, while guessing the admin
 * token still costs the guesser.
 *
 * The address is Fastify's `request.ip`: the socket's peer, or, when the
 * peer is one of `TRUSTED_PROXIES`, the nearest untrusted address in
 * `X-Forwarded-For` (Fastify's `trustProxy`, proxy-addr's rules).
 */
export class ClientFailureBudget {
  private readonly windowMs: number;
  private readonly counters: Record<Listener, FixedWindowThrottlerStorage>;

  constructor(
    private readonly limit: number,
    windowSeconds: number,
    now: () => number = Date.now,
  ) {
    this.windowMs = windowSeconds * 1000;
    this.counters = { public: new FixedWindowThrottlerStorage(now), admin: new FixedWindowThrottlerStorage(now) };
  }

  /**
   * Throws `429` when the client has used up its failures in this window,
   * with the headers the contract gives every 429 (Limits): `Retry-After` and
   * `X-RateLimit-Limit`/`-Remaining`/`-Reset` of this budget.
   */
  assertWithinBudget(listener: Listener, client: string): void {
    if (this.limit === 0) return;
    const { hits, secondsLeft, resetAtSeconds } = this.counters[listener].peek(client, this.windowMs);
    if (hits < this.limit) return;
    throw new DomainError(
      ErrorCode.RateLimited,
      `Too many failed requests from this address (${this.limit} per ${this.windowMs / 1000} seconds); retry after the window resets.`,
      {
        headers: {
          'retry-after': String(secondsLeft),
          'x-ratelimit-limit': String(this.limit),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(resetAtSeconds),
        },
      },
    );
  }

  recordFailure(listener: Listener, client: string): void {
    if (this.limit === 0) return;
    this.counters[listener].incrementNow(client, this.windowMs, this.limit);
  }
}
