import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest, listenerOf } from '../http/listener';
import { routeMetadata } from '../http/route-metadata';
import { RouteMiss } from '../http/route-miss';
import { bearerTokenOf } from './bearer-token';
import { DASHBOARD_ACCESS, DASHBOARD_ROUTE, type DashboardAccess, type DashboardRouteKind } from './dashboard-access';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Internal routes need both the admin listener and its credential:
 * `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. The
 * listener is checked again here (the conventions hook already refuses a
 * route on the wrong socket) so that neither check alone opens a route.
 * Dashboard pages are the one exception to the bearer token: they ask the
 * dashboard's session provider, and without one they are refused.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | null;
  private readonly dashboardKindOf: (context: ExecutionContext) => DashboardRouteKind | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    reflector: Reflector,
    @Optional() @Inject(DASHBOARD_ACCESS) private readonly dashboard: DashboardAccess | null = null,
  ) {
    this.expected = config.adminToken === null ? null : digest(config.adminToken);
    this.dashboardKindOf = routeMetadata<DashboardRouteKind>(reflector, DASHBOARD_ROUTE);
  }

  // Synchronous except for dashboard pages: Nest awaits a guard only when it returns a promise, and every
  // request of the public API passes here.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (audienceOfRequest(request)?.credential !== 'admin-token') return true;
    if (listenerOf(request.raw) !== 'admin') throw new RouteMiss();
    const dashboardKind = this.dashboardKindOf(context);
    if (dashboardKind !== undefined) return this.allowsDashboard(request, dashboardKind);
    if (!this.hasAdminToken(request.headers.authorization)) {
      throw new DomainError(ErrorCode.Unauthorized, 'A valid admin token is required.');
    }
    return true;
  }

  private async allowsDashboard(request: FastifyRequest, kind: DashboardRouteKind): Promise<boolean> {
    if (this.dashboard !== null && (await this.dashboard.allows(request, kind))) return true;
    throw new DomainError(ErrorCode.Unauthorized, 'Sign in to the dashboard first.');
  }

  /** Hashing both sides first makes the comparison constant-time whatever the lengths. */
  hasAdminToken(authorization: string | undefined): boolean {
    const token = bearerTokenOf(authorization);
    return this.expected !== null && token !== null && timingSafeEqual(digest(token), this.expected);
  }
}
