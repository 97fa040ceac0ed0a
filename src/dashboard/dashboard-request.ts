import type { FastifyRequest } from 'fastify';
import type { DashboardSession } from './session-store';

const SESSION = Symbol('dashboard-session');

type RequestWithSession = FastifyRequest & { [SESSION]?: DashboardSession | null };

/** Set by the access check (the admin-token guard's delegate) before any dashboard handler runs. */
export function attachSession(request: FastifyRequest, session: DashboardSession | null): void {
  (request as RequestWithSession)[SESSION] = session;
}

export function sessionOf(request: FastifyRequest): DashboardSession | null {
  return (request as RequestWithSession)[SESSION] ?? null;
}
