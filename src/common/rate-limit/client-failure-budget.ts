import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import type { Listener } from '../http/listener';
import { failureBudgetClient } from './failure-budget-client';

/**
 * A request the budget let in whose answer is not known yet. It holds one
 * unit of its client's budget until it is settled (`ClientFailureBudget.settle`).
 */
export interface Admission {
  readonly listener: Listener;
  /** The client it counts against (`failureBudgetClient`). */
  readonly client: string;
  /** The start of the window it was let in (ms since the epoch). */
  readonly windowStart: number;
  /** False once its unit (or its share of one) is given back. */
  holdsUnit: boolean;
  /**
   * The credential it carries (its `Authorization` value), when it has one:
   * requests of one credential undecided at once share one unit.
   */
  readonly credential?: string;
}

interface ClientWindow {
  /** The start of the window the figures belong to (ms since the epoch, a multiple of the window's length). */
  start: number;
  failures: number;
  /** Requests let in during this window whose answer is not known yet. */
  undecided: number;
  /** Requests let in during the window before whose answer is not known yet. */
  undecidedBefore: number;
  /**
   * Undecided requests by the window they were let in and their credential
   * (`${windowStart} ${credential}`): together they hold one unit, given
   * back when the last of them is settled.
   */
  sharing: Map<string, number>;
}

/**
 * A per-client budget for failed requests (internal-api.md,
 * `RATE_LIMIT_FAILURES_PER_CLIENT`): answers of `401` and requests for a
 * route that does not exist count against the client's address; past the
 * limit, every request of that address gets `429 rate_limited` until the
 * fixed window ends. It is checked before a key is looked up or a body read,
 * so guessing keys or probing paths costs the sender and not the database.
 *
 * A request is known to have failed only once it is answered, and a burst
 * of requests all arrive before the first answer: counting failures alone
 * would let every request of the burst through. So a request let in holds a
 * unit of the budget while it is undecided, and the check refuses once the
 * failures and the undecided requests together reach the limit; settling the
 * request turns its unit into a failure or gives it back. Undecided requests
 * let in during the previous window still count, so a burst sent just before
 * the window ends cannot fail in the next one on top of that window's own
 * failures. A request that is never settled (its connection gone before its
 * body was read) holds its unit until the end of the window after its own.
 *
 * Requests that carry the same credential are decided together (the key is
 * valid or not), so while one of them is undecided the others share its unit
 * rather than take one each: a burst with one valid key is not refused
 * because its requests wait for that key's first lookup, while a guesser
 * still pays a unit for every distinct key in flight, and every request that
 * fails counts as a failure.
 *
 * Each listener counts on its own: the internal API has no rate limit of the
 * public API's, so a public client that spends its failures (a misconfigured
 * integration behind the operators' own NAT, a test rig on loopback) cannot
 * lock the operators out of the admin listener, while guessing the admin
 * token still costs the guesser. On the admin listener a request with the
 * valid admin token is not asked to `admit` at all (installHttpConventions):
 * it is no guess, so a guesser sharing the operators' address cannot black
 * out their requests or the metrics scrape.
 *
 * The address is Fastify's `request.ip`: the socket's peer, or, when the
 * peer is one of `TRUSTED_PROXIES`, the nearest untrusted address in
 * `X-Forwarded-For` (Fastify's `trustProxy`, proxy-addr's rules). An IPv6
 * client is its /64 (`failureBudgetClient`).
 */
export class ClientFailureBudget {
  private readonly windowMs: number;
  private readonly clients: Record<Listener, Map<string, ClientWindow>> = { public: new Map(), admin: new Map() };
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.windowMs = windowSeconds * 1000;
  }

  /**
   * Lets a request in, holding a unit of its client's budget until it is
   * settled, or throws `429` when the client's failures and undecided
   * requests have reached the limit, with the headers the contract gives
   * every 429 (Limits): `Retry-After` and `X-RateLimit-Limit`/`-Remaining`/
   * `-Reset` of this budget. Null when the budget is off.
   */
  admit(listener: Listener, address: string, credential?: string): Admission | null {
    if (this.limit === 0) return null;
    const client = failureBudgetClient(address);
    const now = this.now();
    const start = this.windowStartAt(now);
    this.sweep(start);
    const window = this.windowOf(listener, client, start);
    const shared = credential === undefined ? undefined : `${window.start} ${credential}`;
    const sharers = shared === undefined ? 0 : (window.sharing.get(shared) ?? 0);
    if (sharers > 0 && window.failures < this.limit) {
      window.sharing.set(shared as string, sharers + 1);
      return { listener, client, windowStart: window.start, holdsUnit: true, credential };
    }
    if (window.failures + window.undecided + window.undecidedBefore >= this.limit) {
      throw this.refusal(now, start, window.failures >= this.limit);
    }
    window.undecided += 1;
    if (shared !== undefined) window.sharing.set(shared, 1);
    return { listener, client, windowStart: window.start, holdsUnit: true, credential };
  }

  /**
   * Gives back the admission's unit, the first time only, and counts a
   * failure when `failed`. A request given back early (its key accepted) may
   * still fail later: its failure counts all the same.
   */
  settle(admission: Admission, failed: boolean): void {
    const start = this.windowStartAt(this.now());
    const window = this.clients[admission.listener].get(admission.client);
    const current = window === undefined ? undefined : this.rolled(window, start);
    if (admission.holdsUnit) {
      admission.holdsUnit = false;
      const unitBack = window === undefined || admission.credential === undefined || this.lastSharer(window, admission);
      if (unitBack && current?.start === admission.windowStart) current.undecided -= 1;
      else if (unitBack && current !== undefined && current.start - this.windowMs === admission.windowStart) {
        current.undecidedBefore -= 1;
      }
    }
    if (failed) this.countFailure(admission.listener, admission.client);
  }

  /** Counts a failure of the address's client, in the current window. */
  recordFailure(listener: Listener, address: string): void {
    if (this.limit === 0) return;
    this.countFailure(listener, failureBudgetClient(address));
  }

  private countFailure(listener: Listener, client: string): void {
    const start = this.windowStartAt(this.now());
    this.sweep(start);
    this.windowOf(listener, client, start).failures += 1;
  }

  /** Takes the admission out of its credential's group; true when it was the last, so the unit goes back. */
  private lastSharer(window: ClientWindow, admission: Admission): boolean {
    const shared = `${admission.windowStart} ${admission.credential ?? ''}`;
    const sharers = (window.sharing.get(shared) ?? 1) - 1;
    if (sharers > 0) {
      window.sharing.set(shared, sharers);
      return false;
    }
    window.sharing.delete(shared);
    return true;
  }

  private windowStartAt(now: number): number {
    return Math.floor(now / this.windowMs) * this.windowMs;
  }

  private windowOf(listener: Listener, client: string, start: number): ClientWindow {
    const window = this.clients[listener].get(client);
    if (window !== undefined) return this.rolled(window, start);
    const fresh = { start, failures: 0, undecided: 0, undecidedBefore: 0, sharing: new Map<string, number>() };
    this.clients[listener].set(client, fresh);
    return fresh;
  }

  /** The client's figures moved on to the window that starts at `start`. */
  private rolled(window: ClientWindow, start: number): ClientWindow {
    // A clock stepped back keeps the window it had, so no unit is counted in a window it was not let in.
    if (window.start >= start) return window;
    window.undecidedBefore = window.start === start - this.windowMs ? window.undecided : 0;
    window.undecided = 0;
    window.failures = 0;
    window.start = start;
    return window;
  }

  private refusal(now: number, start: number, failuresAlone: boolean): DomainError {
    const end = start + this.windowMs;
    const secondsLeft = Math.ceil((end - now) / 1000);
    const figure = `${this.limit} per ${this.windowMs / 1000} seconds`;
    return new DomainError(
      ErrorCode.RateLimited,
      failuresAlone
        ? `Too many failed requests from this address (${figure}); retry after the window resets.`
        : `Too many failed requests from this address (${figure}), counting the requests still being answered; retry when they are answered or after the window resets.`,
      {
        headers: {
          'retry-after': String(secondsLeft),
          'x-ratelimit-limit': String(this.limit),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(end / 1000)),
        },
      },
    );
  }

  /** Forgets the clients with nothing left to count, at most once per window. */
  private sweep(start: number): void {
    if (start === this.lastSweep) return;
    this.lastSweep = start;
    for (const clients of Object.values(this.clients)) {
      for (const [client, window] of clients) {
        const carries = window.start === start - this.windowMs && window.undecided > 0;
        if (window.start < start && !carries) clients.delete(client);
      }
    }
  }
}
