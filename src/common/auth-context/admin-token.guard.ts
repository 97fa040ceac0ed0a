import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest, listenerOf } from '../http/listener';
import { routeMetadata } from '../http/route-metadata';
import { RouteMiss } from '../http/route-miss';
import { ADMIN_TOKEN_REQUIRED, adminTokenMatcher } from './admin-token';
import { DASHBOARD_ACCESS, DASHBOARD_ROUTE, type DashboardAccess, type DashboardRouteKind } from './dashboard-access';

/**
 * Internal routes need both the admin listener and its credential:
 * `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. The
 * listener is checked again here (the conventions hook already refuses a
 * route on the wrong socket) so that neither check alone opens a route.
 * Dashboard pages are the one exception to the bearer token: they ask the
 * dashboard's session provider, and without one they are refused. The
 * token is also checked before the body is read (request-authentication.ts);
 * this guard is the second check, so neither alone opens a route.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  /** Whether an `Authorization` header carries the admin token (constant time). */
  readonly hasAdminToken: (authorization: string | undefined) => boolean;
  private readonly dashboardKindOf: (context: ExecutionContext) => DashboardRouteKind | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    reflector: Reflector,
    @Optional() @Inject(DASHBOARD_ACCESS) private readonly dashboard: DashboardAccess | null = null,
  ) {
    this.hasAdminToken = adminTokenMatcher(config.adminToken);
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
      throw new DomainError(ErrorCode.Unauthorized, ADMIN_TOKEN_REQUIRED);
    }
    return true;
  }

  private async allowsDashboard(request: FastifyRequest, kind: DashboardRouteKind): Promise<boolean> {
    if (this.dashboard !== null && (await this.dashboard.allows(request, kind))) return true;
    throw new DomainError(ErrorCode.Unauthorized, 'Sign in to the dashboard first.');
  }
}
