import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachAuthContext } from '../auth-context/auth.decorator';
import { DomainError } from '../errors/domain-error';
import { AccountRateLimitGuard, READ_METHODS, WRITE_METHODS } from './account-rate-limit.guard';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';

function contextFor(method: string, warnings: unknown[], headers: Record<string, string>) {
  const request = {
    method,
    raw: {},
    routeOptions: { url: '/v1/events' },
    headers: {},
    log: { warn: (...args: unknown[]) => warnings.push(args) },
  } as never;
  attachAuthContext(request, {
    principal: { type: 'organiser', id: 'org_1' },
    scopes: [],
    keyId: 'key_1',
    keyPrefix: 'svc_live_abc',
  });
  const reply = { headers: (values: Record<string, string>) => Object.assign(headers, values) };
  class Handler {}
  const handle = (): void => undefined;
  return new ExecutionContextHost([request, reply], Handler, handle);
}

const methodOf = (context: ExecutionContextHost): string =>
  context.switchToHttp().getRequest<{ method: string }>().method;

function guardWith(storage: object, throttlers?: object[]): AccountRateLimitGuard {
  const options = {
    throttlers: throttlers ?? [
      {
        name: 'reads',
        ttl: 60_000,
        limit: 5,
        skipIf: (c: ExecutionContextHost) => !READ_METHODS.includes(methodOf(c)),
      },
      {
        name: 'writes',
        ttl: 60_000,
        limit: 2,
        skipIf: (c: ExecutionContextHost) => !WRITE_METHODS.includes(methodOf(c)),
      },
    ],
  };
  return new AccountRateLimitGuard(options as never, storage as never);
}

const record = { totalHits: 2, timeToExpire: 30, isBlocked: false, timeToBlockExpire: 30 };

describe('AccountRateLimitGuard', () => {
  it('serves the request and logs a warning when the counter store cannot be read (fail open)', async () => {
    const failing = [
      guardWith({ increment: () => Promise.reject(new Error('store down')) }),
      guardWith({
        increment: () => Promise.reject(new Error('unused')),
        incrementNow: () => {
          throw new Error('store down');
        },
      }),
    ];
    for (const guard of failing) {
      const warnings: unknown[] = [];
      assert.equal(await guard.canActivate(contextFor('GET', warnings, {})), true);
      assert.equal(warnings.length, 1);
    }
  });

  it('tracks the account, not the key, and sets the X-RateLimit headers', async () => {
    const keys: unknown[] = [];
    const asynchronous = guardWith({
      increment: (key: unknown) => (keys.push(key), Promise.resolve(record)),
    });
    const immediate = guardWith({
      increment: () => Promise.reject(new Error('unused')),
      incrementNow: (key: unknown) => (keys.push(key), record),
    });
    for (const guard of [asynchronous, immediate]) {
      const headers: Record<string, string> = {};
      await guard.canActivate(contextFor('GET', [], headers));
      assert.equal(headers['x-ratelimit-limit'], '5');
      assert.equal(headers['x-ratelimit-remaining'], '3');
    }
    assert.deepEqual(keys, ['reads:organiser:org_1', 'reads:organiser:org_1']);
  });

  it('draws reads and writes on their own budgets, and refuses past the limit with 429 and Retry-After', () => {
    const guard = guardWith(new FixedWindowThrottlerStorage(() => 60_000 * 1000 + 15_000));
    for (let write = 1; write <= 2; write += 1) assert.equal(guard.canActivate(contextFor('POST', [], {})), true);
    assert.equal(guard.canActivate(contextFor('GET', [], {})), true);
    assert.throws(
      () => guard.canActivate(contextFor('PATCH', [], {})),
      (error: unknown) =>
        error instanceof DomainError &&
        error.status === 429 &&
        error.headers['retry-after'] === '45' &&
        error.headers['x-ratelimit-remaining'] === '0',
    );
  });

  it('answers in the same turn, without a promise, when the store counts immediately', () => {
    const guard = guardWith(new FixedWindowThrottlerStorage());
    const headers: Record<string, string> = {};
    assert.equal(guard.canActivate(contextFor('GET', [], headers)), true);
    assert.equal(headers['x-ratelimit-remaining'], '4');
  });

  it("takes X-RateLimit-Reset and Retry-After from the store's window end when the store knows it (the database clock)", async () => {
    const refusal = {
      totalHits: 6,
      timeToExpire: 12,
      isBlocked: true,
      timeToBlockExpire: 12,
      resetAtSeconds: 1_000_020,
    };
    const served = { ...record, resetAtSeconds: 1_000_020 };
    const headers: Record<string, string> = {};
    const reserving = guardWith({
      increment: () => Promise.reject(new Error('unused')),
      incrementNow: (key: string) => (key.startsWith('reads') ? Promise.resolve(served) : refusal),
    });
    assert.equal(await reserving.canActivate(contextFor('GET', [], headers)), true);
    assert.equal(headers['x-ratelimit-reset'], '1000020');
    assert.throws(
      () => reserving.canActivate(contextFor('POST', [], {})),
      (error: unknown) =>
        error instanceof DomainError &&
        error.headers['x-ratelimit-reset'] === '1000020' &&
        error.headers['retry-after'] === '12',
    );
  });

  it('awaits a count the store answers with a promise (a reservation from the database)', async () => {
    const guard = guardWith({
      increment: () => Promise.reject(new Error('unused')),
      incrementNow: () => Promise.resolve(record),
    });
    const headers: Record<string, string> = {};
    const answer = guard.canActivate(contextFor('GET', [], headers));
    assert.ok(answer instanceof Promise);
    assert.equal(await answer, true);
    assert.equal(headers['x-ratelimit-remaining'], '3');
  });

  it('refuses to start with a budget whose limit or window is not a fixed number (fail closed)', () => {
    assert.throws(() => guardWith({}, [{ name: 'reads', ttl: () => 60_000, limit: 5 }]), /fixed limit and window/);
    assert.throws(() => guardWith({}, []), /no throttlers/);
  });
});
