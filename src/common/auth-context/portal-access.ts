import { SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal } from './access';

/**
 * The webhook portal (internal-api.md, "Webhook portal") is reached with a
 * portal session cookie, never an API key or the admin token. Its routes say
 * which kind they are with `@PortalRoute()`; the portal-session guard asks
 * the provider behind `PORTAL_ACCESS`. A `/portal` route without the
 * decorator, or with no provider registered, is refused (fail closed).
 */
export const PORTAL_ROUTE = 'portal-route';

/**
 * `entry`: reachable without a session (the page that opens a link, its
 * script); `session`: needs one; `optional`: reachable without one, but a
 * live session is checked as on a `session` route (its account's budget, the
 * CSRF token of a post): signing out, which must land on its page whether
 * the session is still live or not, and never end a live one for a forged form.
 */
export type PortalRouteKind = 'entry' | 'session' | 'optional';

export const PortalRoute = (kind: PortalRouteKind = 'session'): MethodDecorator & ClassDecorator =>
  SetMetadata(PORTAL_ROUTE, kind);

export const PORTAL_ACCESS = Symbol('PORTAL_ACCESS');

export interface PortalAccess {
  /**
   * Admits a request to a portal route of that kind, attaching its session
   * (and, for `session` routes, its account with `attachPortalAccount`). Throws
   * to refuse; never resolves false.
   */
  admit(request: FastifyRequest, kind: PortalRouteKind): Promise<true>;
}

const PORTAL_ACCOUNT = Symbol('portal-account');

type RequestWithPortalAccount = FastifyRequest & { [PORTAL_ACCOUNT]?: Principal };

/** The account a portal session belongs to, for the guards that follow (the account's rate budget). */
export function attachPortalAccount(request: FastifyRequest, account: Principal): void {
  (request as RequestWithPortalAccount)[PORTAL_ACCOUNT] = account;
}

export function portalAccountOf(request: FastifyRequest): Principal | undefined {
  return (request as RequestWithPortalAccount)[PORTAL_ACCOUNT];
}
