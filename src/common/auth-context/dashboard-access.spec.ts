import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { markAdminRequest } from '../http/listener';
import { AdminTokenGuard } from './admin-token.guard';
import { DashboardRoute, type DashboardAccess } from './dashboard-access';

const TOKEN = 'a'.repeat(40);

class Pages {
  @DashboardRoute('session')
  page(this: void): void {}

  plain(this: void): void {}
}

/** An admin-listener request to `handler` of `Pages`, with optional headers. */
function context(handler: 'page' | 'plain', headers: Record<string, string> = {}): ExecutionContextHost {
  const raw = {} as IncomingMessage;
  markAdminRequest(raw);
  const host = new ExecutionContextHost([{ raw, headers, routeOptions: { url: '/internal/dashboard/x' } }, {}]);
  host.setType('http');
  (host as unknown as { getHandler(): unknown }).getHandler = () => Pages.prototype[handler];
  (host as unknown as { getClass(): unknown }).getClass = () => Pages;
  return host;
}

/** The guard as Nest builds it: the dashboard's provider injected when DashboardModule exports one. */
function guard(access: DashboardAccess | null): AdminTokenGuard {
  return new AdminTokenGuard({ adminToken: TOKEN } as AppConfig, new Reflector(), access);
}

describe('admin-token guard and dashboard routes', () => {
  it('refuses @DashboardRoute handlers with 401 when no DASHBOARD_ACCESS provider is registered, even with the token', async () => {
    await assert.rejects(
      async () => guard(null).canActivate(context('page', { authorization: `Bearer ${TOKEN}` })),
      (error: unknown) => error instanceof DomainError && error.status === 401,
    );
  });

  it('asks the DASHBOARD_ACCESS provider about @DashboardRoute handlers instead of reading the bearer token', async () => {
    const asked: string[] = [];
    const access: DashboardAccess = { allows: (_request, kind) => (asked.push(kind), true) };
    assert.equal(await guard(access).canActivate(context('page')), true);
    assert.deepEqual(asked, ['session']);
    const refusing: DashboardAccess = { allows: () => false };
    await assert.rejects(async () =>
      guard(refusing).canActivate(context('page', { authorization: `Bearer ${TOKEN}` })),
    );
  });

  it('still requires the bearer token on every other internal handler when a provider is registered', async () => {
    const access: DashboardAccess = { allows: () => true };
    await assert.rejects(
      async () => guard(access).canActivate(context('plain')),
      (error: unknown) => error instanceof DomainError && error.status === 401,
    );
    assert.equal(await guard(access).canActivate(context('plain', { authorization: `Bearer ${TOKEN}` })), true);
  });
});
