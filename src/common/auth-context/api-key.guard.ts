import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest } from '../http/listener';
import { authContextOf } from './auth.decorator';

export const UNAUTHENTICATED_MESSAGE = 'A valid API key is required: Authorization: Bearer <API_KEY>.';

/**
 * Every public API route needs a caller resolved from an API key. The key is
 * resolved before the body is read, by the request-authentication hook; this
 * guard refuses any public API route that reached Nest without one, so a
 * route is never open because a hook was not installed.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (audienceOfRequest(request)?.credential !== 'api-key') return true;
    if (authContextOf(request) === undefined) throw new DomainError(ErrorCode.Unauthorized, UNAUTHENTICATED_MESSAGE);
    return true;
  }
}
