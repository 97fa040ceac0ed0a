import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachAuthContext } from '../auth-context/auth.decorator';
import { AccountRateLimitGuard, READ_METHODS } from './account-rate-limit.guard';

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

async function guardWith(storage: { increment: (...args: unknown[]) => Promise<unknown> }) {
  const options = {
    throttlers: [
      {
        name: 'reads',
        ttl: 60_000,
        limit: 5,
        skipIf: (context: ExecutionContextHost) =>
          !READ_METHODS.includes(context.switchToHttp().getRequest<{ method: string }>().method),
      },
    ],
  };
  const guard = new AccountRateLimitGuard(options as never, storage as never);
  await guard.onModuleInit();
  return guard;
}

describe('AccountRateLimitGuard', () => {
  it('serves the request and logs a warning when the counter store cannot be read (fail open)', async () => {
    const guard = await guardWith({ increment: () => Promise.reject(new Error('store down')) });
    const warnings: unknown[] = [];
    assert.equal(await guard.canActivate(contextFor('GET', warnings, {})), true);
    assert.equal(warnings.length, 1);
  });

  it('tracks the account, not the key, and sets the X-RateLimit headers', async () => {
    const keys: unknown[] = [];
    const guard = await guardWith({
      increment: (key: unknown) => {
        keys.push(key);
        return Promise.resolve({ totalHits: 2, timeToExpire: 30, isBlocked: false, timeToBlockExpire: 30 });
      },
    });
    const headers: Record<string, string> = {};
    await guard.canActivate(contextFor('GET', [], headers));
    assert.deepEqual(keys, ['reads:organiser:org_1']);
    assert.equal(headers['x-ratelimit-limit'], '5');
    assert.equal(headers['x-ratelimit-remaining'], '3');
  });
});
