import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';

/**
 * A per-client budget for failed requests (internal-api.md,
 * `RATE_LIMIT_FAILURES_PER_CLIENT`): answers of `401` and requests for a
 * route that does not exist count against the client's address; past the
 * limit, every request of that address gets `429 rate_limited` until the
 * fixed window ends. It is checked before a key is looked up or a body read,
 * so guessing keys or probing paths costs the sender and not the database.
 *
 * The address is Fastify's `request.ip`: the socket's peer, or, when the
 * peer is one of `TRUSTED_PROXIES`, the nearest untrusted address in
 * `X-Forwarded-For` (Fastify's `trustProxy`, proxy-addr's rules).
 */
export class ClientFailureBudget {
  private readonly windowMs: number;

  constructor(
    private readonly limit: number,
    windowSeconds: number,
    private readonly counters = new FixedWindowThrottlerStorage(),
  ) {
    this.windowMs = windowSeconds * 1000;
  }

  /** Throws `429` when the client has used up its failures in this window. */
  assertWithinBudget(client: string): void {
    if (this.limit === 0) return;
    const { hits, secondsLeft } = this.counters.peek(client, this.windowMs);
    if (hits < this.limit) return;
    throw new DomainError(
      ErrorCode.RateLimited,
      `Too many failed requests from this address (${this.limit} per ${this.windowMs / 1000} seconds); retry after the window resets.`,
      { headers: { 'retry-after': String(secondsLeft) } },
    );
  }

  recordFailure(client: string): void {
    if (this.limit === 0) return;
    this.counters.incrementNow(client, this.windowMs, this.limit);
  }
}
