import { SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * The dashboard is the one internal surface that is not called with the
 * admin bearer token (internal-api.md, "Dashboard"): a person signs in once
 * and then carries a session cookie. Its routes say so with
 * `@DashboardRoute()`; the admin-token guard then asks the provider behind
 * `DASHBOARD_ACCESS` instead of reading `Authorization`. With no such
 * provider registered, dashboard routes are refused (fail closed).
 */
export const DASHBOARD_ROUTE = 'dashboard-route';

export type DashboardRouteKind = 'sign-in' | 'session';

/** `sign-in`: reachable without a session (the form itself); `session`: needs a signed-in session. */
export const DashboardRoute = (kind: DashboardRouteKind = 'session'): MethodDecorator & ClassDecorator =>
  SetMetadata(DASHBOARD_ROUTE, kind);

export const DASHBOARD_ACCESS = Symbol('DASHBOARD_ACCESS');

export interface DashboardAccess {
  /**
   * True when the request may reach a dashboard route of that kind. May
   * throw (for example a redirect to the sign-in form) instead of returning false.
   */
  allows(request: FastifyRequest, kind: DashboardRouteKind): boolean | Promise<boolean>;
}
