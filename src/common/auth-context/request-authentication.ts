import type { FastifyInstance } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest } from '../http/listener';
import type { AuthContext } from './access';
import { UNAUTHENTICATED_MESSAGE } from './api-key.guard';
import { attachAuthContext } from './auth.decorator';

export interface ApiKeyAuthenticator {
  /** The caller of an `Authorization` header, or null for every kind of failure. */
  authenticate(authorization: string | undefined): Promise<AuthContext | null>;
}

/**
 * Resolves the API key of every public API request in `onRequest`, before
 * Fastify reads the body: a caller without a valid key is refused having
 * cost one header check (malformed keys never reach the database) and never
 * a body parse. Authorisation (scopes, principal types) stays with the guards.
 */
export function installRequestAuthentication(fastify: FastifyInstance, keys: ApiKeyAuthenticator): void {
  fastify.addHook('onRequest', async (request) => {
    if (audienceOfRequest(request)?.credential !== 'api-key') return;
    const auth = await keys.authenticate(request.headers.authorization);
    if (auth === null) throw new DomainError(ErrorCode.Unauthorized, UNAUTHENTICATED_MESSAGE);
    attachAuthContext(request, auth);
  });
}
