import type { FastifyRequest } from 'fastify';
import type { PortalSessionRow } from './portal-access.repository';

const SESSION = Symbol('portal-session');

type RequestWithSession = FastifyRequest & { [SESSION]?: PortalSessionRow | null };

/** Set by the portal's access check before any portal handler runs. */
export function attachPortalSession(request: FastifyRequest, session: PortalSessionRow | null): void {
  (request as RequestWithSession)[SESSION] = session;
}

export function portalSessionOf(request: FastifyRequest): PortalSessionRow | null {
  return (request as RequestWithSession)[SESSION] ?? null;
}

/** The session of a `session` route: the guard refused the request before any handler without one. */
export function requirePortalSession(request: FastifyRequest): PortalSessionRow {
  const session = portalSessionOf(request);
  if (session === null) throw new Error('a portal session route was reached without a session');
  return session;
}
