import type { FastifyInstance } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest } from '../http/listener';
import type { AuthContext } from './access';
import { UNAUTHENTICATED_MESSAGE } from './api-key.guard';
import { attachAuthContext } from './auth.decorator';

export interface ApiKeyAuthenticator {
  /** The caller of an `Authorization` header, or null for every kind of failure; a promise only when it must read. */
  authenticate(authorization: string | undefined): AuthContext | null | Promise<AuthContext | null>;
}

/**
 * Resolves the API key of every public API request in `onRequest`, before
 * Fastify reads the body: a caller without a valid key is refused having
 * cost one header check (malformed keys never reach the database) and never
 * a body parse. Authorisation (scopes, principal types) stays with the guards.
 * The hook takes Fastify's `done` rather than being async: a cached key is
 * resolved in the same turn, and an async hook would cost a promise per request.
 */
export function installRequestAuthentication(fastify: FastifyInstance, keys: ApiKeyAuthenticator): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (audienceOfRequest(request)?.credential !== 'api-key') return done();
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
