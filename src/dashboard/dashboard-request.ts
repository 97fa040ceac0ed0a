import type { FastifyRequest } from 'fastify';
import type { DashboardSession } from './session-store';

const SESSION = Symbol('dashboard-session');

/** The session a request found (or opened), with the cookie value that names it: only this request holds it. */
export interface SessionOfRequest {
  readonly session: DashboardSession;
  readonly cookieValue: string;
}

type RequestWithSession = FastifyRequest & { [SESSION]?: SessionOfRequest | null };

/** Set by the access check (the admin-token guard's delegate) before any dashboard handler runs. */
export function attachSession(request: FastifyRequest, found: SessionOfRequest | null): void {
  (request as RequestWithSession)[SESSION] = found;
}

export function sessionOf(request: FastifyRequest): DashboardSession | null {
  return (request as RequestWithSession)[SESSION]?.session ?? null;
}

export function attachedSession(request: FastifyRequest): SessionOfRequest | null {
  return (request as RequestWithSession)[SESSION] ?? null;
}
