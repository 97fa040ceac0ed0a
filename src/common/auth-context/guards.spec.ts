import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadAppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { RouteMiss } from '../http/route-miss';
import { AdminTokenGuard } from './admin-token.guard';
import { ApiKeyGuard } from './api-key.guard';
import { attachAuthContext } from './auth.decorator';
import { DASHBOARD_ROUTE, type DashboardAccess } from './dashboard-access';
import { guardContext } from './guard-test-context';
import { ACCESS_KEY } from './require-access.decorator';
import { ScopeGuard } from './scope.guard';

const TOKEN = 'a'.repeat(40);
const config = loadAppConfig({ ADMIN_TOKEN: TOKEN });

function errorCodeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    if (error instanceof RouteMiss) return 'route_miss';
    throw error;
  }
  return 'allowed';
}

async function outcomeOf(run: () => unknown): Promise<string> {
  try {
    await run();
    return 'allowed';
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    if (error instanceof RouteMiss) return 'route_miss';
    throw error;
  }
}

function withMetadata(key: string, value: unknown): () => void {
  const handler = (): void => undefined;
  SetMetadata(key, value)(handler, 'handler', { value: handler });
  return handler;
}

describe('ScopeGuard (fail closed)', () => {
  const guard = new ScopeGuard(new Reflector());

  it('refuses a public route that declares no access rule, even for an authenticated key', () => {
    const context = guardContext('/v1/forgotten', 'public');
    attachAuthContext(context.switchToHttp().getRequest(), {
      principal: { type: 'organiser', id: 'org_1' },
      scopes: ['events:read'],
      keyId: 'k',
      keyPrefix: 'p',
    });
    assert.equal(
      errorCodeOf(() => guard.canActivate(context)),
      'forbidden',
    );
  });

  it('refuses a declared route reached without an authenticated principal', () => {
    const handler = withMetadata(ACCESS_KEY, { principals: ['organiser'] });
    assert.equal(
      errorCodeOf(() => guard.canActivate(guardContext('/v1/me', 'public', { handler }))),
      'unauthorized',
    );
  });
});

describe('ScopeGuard: a key of another principal type', () => {
  const guard = new ScopeGuard(new Reflector());

  function refusalOf(route: string, routePrincipals: string[], keyType: string): DomainError {
    const handler = withMetadata(ACCESS_KEY, { principals: routePrincipals });
    const context = guardContext(route, 'public', { handler });
    attachAuthContext(context.switchToHttp().getRequest(), {
      principal: { type: keyType, id: 'p_1' } as never,
      scopes: [],
      keyId: 'k',
      keyPrefix: 'p',
    });
    try {
      guard.canActivate(context);
    } catch (error) {
      if (error instanceof DomainError) return error;
      throw error;
    }
    assert.fail(`a ${keyType} key passed a route for ${routePrincipals.join(' and ')} keys`);
  }

  it('refuses it with insufficient_scope, naming the key’s type with the right article (an organiser, a venue)', () => {
    const organiserKey = refusalOf('/v1/venues', ['venue'], 'organiser');
    assert.equal(organiserKey.code, 'insufficient_scope');
    assert.equal(organiserKey.message, 'This endpoint serves venue keys; this key belongs to an organiser.');
    const venueKey = refusalOf('/v1/orders', ['organiser'], 'venue');
    assert.equal(venueKey.message, 'This endpoint serves organiser keys; this key belongs to a venue.');
  });
});

describe('ApiKeyGuard (fail closed)', () => {
  it('refuses a public API route that reached Nest without an authenticated key', () => {
    assert.equal(
      errorCodeOf(() => new ApiKeyGuard().canActivate(guardContext('/v1/events', 'public'))),
      'unauthorized',
    );
  });

  it('leaves internal routes to the admin-token guard', () => {
    assert.equal(
      errorCodeOf(() => new ApiKeyGuard().canActivate(guardContext('/internal/keys', 'admin'))),
      'allowed',
    );
  });
});

describe('AdminTokenGuard (fail closed)', () => {
  const guard = (dashboard: DashboardAccess | null = null) => new AdminTokenGuard(config, new Reflector(), dashboard);
  const bearer = { authorization: `Bearer ${TOKEN}` };

  it('refuses an internal route reached through the public listener, even with the admin token', async () => {
    assert.equal(
      await outcomeOf(() => guard().canActivate(guardContext('/internal/keys', 'public', { headers: bearer }))),
      'route_miss',
    );
  });

  it('requires the admin token on the admin listener', async () => {
    assert.equal(await outcomeOf(() => guard().canActivate(guardContext('/internal/keys', 'admin'))), 'unauthorized');
    assert.equal(
      await outcomeOf(() =>
        guard().canActivate(guardContext('/internal/keys', 'admin', { headers: { authorization: 'Bearer wrong' } })),
      ),
      'unauthorized',
    );
    assert.equal(
      await outcomeOf(() => guard().canActivate(guardContext('/internal/keys', 'admin', { headers: bearer }))),
      'allowed',
    );
  });

  it('refuses every internal route when no ADMIN_TOKEN is configured', async () => {
    const unconfigured = new AdminTokenGuard(loadAppConfig({}), new Reflector(), null);
    assert.equal(
      await outcomeOf(() => unconfigured.canActivate(guardContext('/internal/keys', 'admin', { headers: bearer }))),
      'unauthorized',
    );
  });

  it('refuses a dashboard route when no dashboard session provider is registered', async () => {
    const handler = withMetadata(DASHBOARD_ROUTE, 'session');
    assert.equal(
      await outcomeOf(() => guard().canActivate(guardContext('/internal/dashboard', 'admin', { handler }))),
      'unauthorized',
    );
    const allowing: DashboardAccess = { allows: () => true };
    assert.equal(
      await outcomeOf(() => guard(allowing).canActivate(guardContext('/internal/dashboard', 'admin', { handler }))),
      'allowed',
    );
  });
});
