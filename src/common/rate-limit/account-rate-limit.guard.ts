import { ExecutionContext, Injectable } from '@nestjs/common';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountOf } from '../auth-context/access';
import { authContextOf } from '../auth-context/auth.decorator';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest } from '../http/listener';
import { OnceReadReflector } from '../http/route-metadata';
import { loggableError } from '../logging/loggable-error';

export const READS_THROTTLER = 'reads';
export const WRITES_THROTTLER = 'writes';
export const READ_METHODS: readonly string[] = ['GET', 'HEAD'];
export const WRITE_METHODS: readonly string[] = ['POST', 'PATCH', 'PUT', 'DELETE'];

/**
 * Per-account budgets on @nestjs/throttler: the account (principal) is the
 * tracker, so every key of an account draws on one budget, and the `reads`
 * and `writes` throttlers each skip the other's methods. The key is the
 * account alone (not the route), because the budget spans the whole API.
 *
 * Headers are the contract's, on every response (not only 429):
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (unix
 * seconds of the window's end), plus `Retry-After` on 429. When the counter
 * store fails, the request is served and a warning logged (fail open).
 */
@Injectable()
export class AccountRateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
  ) {
    // The library reads its six route decorators per throttler on every request; they are fixed once the app starts.
    super(options, storage, new OnceReadReflector());
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (audienceOfRequest(request)?.credential !== 'api-key') return true;
    return super.canActivate(context);
  }

  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    const auth = authContextOf(request as unknown as FastifyRequest);
    // Authentication runs before every guard, so an unauthenticated request never gets here.
    if (auth === undefined) throw new Error('rate limiting needs an authenticated principal');
    return accountOf(auth.principal);
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = props;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const name = throttler.name ?? READS_THROTTLER;
    const key = generateKey(context, await getTracker(request, context), name);
    let record: Awaited<ReturnType<typeof this.storageService.increment>>;
    try {
      record = await this.storageService.increment(key, ttl, limit, blockDuration, name);
    } catch (error) {
      request.log.warn(
        { error: loggableError(error) },
        'rate-limit counter unavailable; serving the request (fail open)',
      );
      return true;
    }
    const nowSeconds = Math.floor(Date.now() / 1000);
    const headers = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - record.totalHits)),
      'x-ratelimit-reset': String(nowSeconds + record.timeToExpire),
    };
    if (record.isBlocked) {
      throw new DomainError(
        ErrorCode.RateLimited,
        `The account's ${name} budget of ${limit} per ${Math.round(ttl / 1000)} seconds is used up; retry after the window resets.`,
        { headers: { ...headers, 'retry-after': String(record.timeToExpire) } },
      );
    }
    void reply.headers(headers);
    return true;
  }
}
