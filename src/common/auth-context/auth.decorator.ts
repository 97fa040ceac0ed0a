import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AuthContext } from './access';

const AUTH_CONTEXT = Symbol('auth-context');

type RequestWithAuth = FastifyRequest & { [AUTH_CONTEXT]?: AuthContext };

export function attachAuthContext(request: FastifyRequest, auth: AuthContext): void {
  (request as RequestWithAuth)[AUTH_CONTEXT] = auth;
}

export function authContextOf(request: FastifyRequest): AuthContext | undefined {
  return (request as RequestWithAuth)[AUTH_CONTEXT];
}

/**
 * The caller of a public route, as the request-authentication hook resolved
 * it from the API key (request-authentication.ts); ApiKeyGuard only checks
 * that one is attached.
 */
export const Auth = createParamDecorator((_data: unknown, context: ExecutionContext): AuthContext => {
  const auth = authContextOf(context.switchToHttp().getRequest<FastifyRequest>());
  if (auth === undefined) {
    throw new Error('@Auth() used on a route the request-authentication hook did not authenticate');
  }
  return auth;
});
