import type { FastifyInstance } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest, isDashboardRoute } from '../http/listener';
import type { AuthContext } from './access';
import { ADMIN_TOKEN_REQUIRED } from './admin-token';
import { UNAUTHENTICATED_MESSAGE } from './api-key.guard';
import { attachAuthContext } from './auth.decorator';

export interface ApiKeyAuthenticator {
  /** The caller of an `Authorization` header, or null for every kind of failure; a promise only when it must read. */
  authenticate(authorization: string | undefined): AuthContext | null | Promise<AuthContext | null>;
}

/** Node keeps the first of several `Authorization` headers; which one a proxy or client meant is unknowable. */
export const ONE_AUTHORIZATION_HEADER = 'Send exactly one Authorization header.';

function hasSeveralAuthorizationHeaders(rawHeaders: readonly string[]): boolean {
  let seen = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') seen += 1;
  }
  return seen > 1;
}

/**
 * Checks the credential of every request that needs a bearer credential in
 * `onRequest`, before Fastify reads the body: the API key of a public API
 * request, and the admin token of an internal route (the dashboard's pages
 * excepted: their session is their guard's). A caller without a valid one is
 * refused having cost one header check (malformed keys never reach the
 * database) and never a body parse, so a tokenless request with a malformed
 * or non-JSON body is a `401`, not a `400` or `415`. Authorisation (scopes,
 * principal types) stays with the guards, and the admin token guard checks
 * the token again, so neither check alone opens a route. A request with
 * several `Authorization` headers is refused, whichever of them is valid.
 * The hook takes Fastify's `done` rather than being async: a cached key is
 * resolved in the same turn, and an async hook would cost a promise per request.
 */
export function installRequestAuthentication(
  fastify: FastifyInstance,
  keys: ApiKeyAuthenticator,
  hasAdminToken: (authorization: string | undefined) => boolean,
): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const credential = audienceOfRequest(request)?.credential;
    if (
      (credential === 'admin-token' || credential === 'api-key') &&
      hasSeveralAuthorizationHeaders(request.raw.rawHeaders)
    ) {
      return done(new DomainError(ErrorCode.Unauthorized, ONE_AUTHORIZATION_HEADER));
    }
    if (credential === 'admin-token') {
      if (isDashboardRoute(request.routeOptions.url ?? '') || hasAdminToken(request.headers.authorization)) {
        return done();
      }
      return done(new DomainError(ErrorCode.Unauthorized, ADMIN_TOKEN_REQUIRED));
    }
    if (credential !== 'api-key') return done();
    const admit = (auth: AuthContext | null): void => {
      if (auth === null) return done(new DomainError(ErrorCode.Unauthorized, UNAUTHENTICATED_MESSAGE));
      attachAuthContext(request, auth);
      done();
    };
    const auth = keys.authenticate(request.headers.authorization);
    if (auth instanceof Promise) auth.then(admit, done);
    else admit(auth);
  });
}
