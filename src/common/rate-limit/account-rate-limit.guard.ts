import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountOf, type Principal } from '../auth-context/access';
import { authContextOf } from '../auth-context/auth.decorator';
import { portalAccountOf } from '../auth-context/portal-access';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest } from '../http/listener';
import { loggableError } from '../logging/loggable-error';
import { countsImmediately, type CountedHit } from './fixed-window.storage';

export const READS_THROTTLER = 'reads';
export const WRITES_THROTTLER = 'writes';
export const READ_METHODS: readonly string[] = ['GET', 'HEAD'];
export const WRITE_METHODS: readonly string[] = ['POST', 'PATCH', 'PUT', 'DELETE'];

/** One of the throttlers configured in the RateLimitModule, its numbers fixed at start. */
interface AccountBudget {
  name: string;
  ttl: number;
  limit: number;
  skipIf: (context: ExecutionContext) => boolean;
}

/** The configured throttlers; a limit or window that is not a fixed number refuses to start (fail closed). */
function accountBudgetsOf(options: ThrottlerModuleOptions): AccountBudget[] {
  const throttlers: ThrottlerOptions[] = Array.isArray(options) ? options : options.throttlers;
  if (throttlers.length === 0) throw new Error('the account rate limit has no throttlers configured');
  return throttlers.map((throttler) => {
    const { name = 'default', ttl, limit, skipIf = () => false } = throttler;
    if (typeof ttl !== 'number' || typeof limit !== 'number') {
      throw new Error(`the "${name}" account budget needs a fixed limit and window`);
    }
    return { name, ttl, limit, skipIf };
  });
}

/**
 * The account a request draws on: an API key's principal, or a portal
 * session's account (the portal counts like the API, internal-api.md
 * "Webhook portal"); null for routes outside the budget. Authentication
 * runs before this guard, so a counted route without its account is a bug.
 */
function budgetAccountOf(request: FastifyRequest): Principal | null {
  const credential = audienceOfRequest(request)?.credential;
  if (credential === 'api-key') {
    const auth = authContextOf(request);
    if (auth === undefined) throw new Error('rate limiting needs an authenticated principal');
    return auth.principal;
  }
  // Portal routes without a session (the page that opens a link) are not any account's.
  if (credential === 'portal-session') return portalAccountOf(request) ?? null;
  return null;
}

/** Set on a request once its account budget has counted it: a request draws one unit, whichever path counts it. */
const BUDGET_COUNTED = Symbol('account budget counted');
type CountedRequest = FastifyRequest & { [BUDGET_COUNTED]?: true };

function failOpen(request: FastifyRequest, error: unknown): true {
  request.log.warn({ error: loggableError(error) }, 'rate-limit counter unavailable; serving the request (fail open)');
  return true;
}

/**
 * Per-account budgets, configured as @nestjs/throttler throttlers and counted
 * in its `ThrottlerStorage`: the account (principal) is the tracker, so every
 * key of an account draws on one budget, and the `reads` and `writes`
 * throttlers each skip the other's methods. The key is the account alone
 * (not the route), because the budget spans the whole API.
 *
 * Headers are the contract's, on every response (not only 429):
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (unix
 * seconds of the window's end), plus `Retry-After` on 429. When the counter
 * store fails, the request is served and a warning logged (fail open).
 *
 * Why not the library's `ThrottlerGuard`: it resolves every setting, the
 * tracker, the key and the count through a promise each (about a dozen per
 * request), and per-route overrides (`@Throttle`, `@SkipThrottle`) have no
 * place here, since one budget spans the whole API. This guard counts with
 * the store's `incrementNow` when it has one and answers in the same turn
 * when that counts at once, sparing every request those promises
 * (`npm run bench -- side-by-side` shows the difference); a count that needs
 * the database (the shared store reserving more units), or a store with only
 * the asynchronous `increment`, is awaited.
 */
@Injectable()
export class AccountRateLimitGuard implements CanActivate {
  private readonly budgets: AccountBudget[];

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
  ) {
    this.budgets = accountBudgetsOf(options);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // An API key's request was counted before its body was read (installAccountBudgetBeforeBody): count() knows.
    const http = context.switchToHttp();
    return this.count(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), context);
  }

  /**
   * Draws one unit of the request's account budget and sets the budget's
   * headers, or throws `429 rate_limited`; true for a request outside the
   * budgets. Once per request: a second call counts nothing.
   */
  count(
    request: FastifyRequest,
    reply: FastifyReply,
    context: ExecutionContext = new ExecutionContextHost([request, reply]),
  ): true | Promise<true> {
    const principal = budgetAccountOf(request);
    if (principal === null) return true;
    // The reads and writes budgets skip each other's methods: a request draws on one of them (or none).
    const budget = this.budgets.find((candidate) => !candidate.skipIf(context));
    if (budget === undefined) return true;
    const marked = request as CountedRequest;
    if (marked[BUDGET_COUNTED] === true) return true;
    marked[BUDGET_COUNTED] = true;
    const key = `${budget.name}:${accountOf(principal)}`;
    if (!countsImmediately(this.storage)) {
      return this.storage.increment(key, budget.ttl, budget.limit, budget.ttl, budget.name).then(
        (record) => this.admit(budget, record, reply),
        (error: unknown) => failOpen(request, error),
      );
    }
    let counted: CountedHit | Promise<CountedHit>;
    try {
      counted = this.storage.incrementNow(key, budget.ttl, budget.limit);
    } catch (error) {
      return failOpen(request, error);
    }
    if (counted instanceof Promise) {
      return counted.then(
        (record) => this.admit(budget, record, reply),
        (error: unknown) => failOpen(request, error),
      );
    }
    return this.admit(budget, counted, reply);
  }

  /** Sets the budget's headers, or refuses with `429 rate_limited` past the limit. */
  private admit(budget: AccountBudget, record: CountedHit, reply: FastifyReply): true {
    const headers = {
      'x-ratelimit-limit': String(budget.limit),
      'x-ratelimit-remaining': String(Math.max(0, budget.limit - record.totalHits)),
      'x-ratelimit-reset': String(record.resetAtSeconds ?? Math.floor(Date.now() / 1000) + record.timeToExpire),
    };
    if (record.isBlocked) {
      const window = `${Math.round(budget.ttl / 1000)} seconds`;
      throw new DomainError(
        ErrorCode.RateLimited,
        record.localShare === undefined
          ? `The account's ${budget.name} budget of ${budget.limit} per ${window} is used up; retry after the window resets.`
          : `This instance's share (${record.localShare}) of the account's ${budget.name} budget of ${budget.limit} per ${window} is used up while the shared counter is unreachable; retry after the window resets.`,
        { headers: { ...headers, 'retry-after': String(record.timeToExpire) } },
      );
    }
    void reply.headers(headers);
    return true;
  }
}

/**
 * Counts a request with an accepted API key against its account's budget
 * before Fastify reads its body (`preParsing`, after the key was accepted in
 * `onRequest`): a write whose body is then refused as it is read (malformed
 * JSON, not UTF-8, 413, 415) is one of the account's writes like any other,
 * carries the budget's headers, and gets `429` once the budget is spent,
 * instead of being parsed without end. The guard then finds it counted;
 * requests it does not see here (the portal's, whose session its guard
 * resolves) are counted by the guard.
 */
export function installAccountBudgetBeforeBody(fastify: FastifyInstance, budgets: AccountRateLimitGuard): void {
  fastify.addHook('preParsing', (request, reply, payload, done) => {
    if (audienceOfRequest(request)?.credential !== 'api-key' || authContextOf(request) === undefined) {
      return done(null, payload);
    }
    let counted: true | Promise<true>;
    try {
      counted = budgets.count(request, reply);
    } catch (error) {
      return done(error as Error);
    }
    if (counted === true) return done(null, payload);
    counted.then(
      () => done(null, payload),
      (error: unknown) => done(error as Error),
    );
  });
}
