import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { audienceOfRequest } from '../http/listener';
import { routeMetadata } from '../http/route-metadata';
import { UNAUTHENTICATED_MESSAGE } from './api-key.guard';
import { authContextOf } from './auth.decorator';
import { ACCESS_KEY, type RequiredAccess } from './require-access.decorator';

/**
 * Authorisation is scope together with principal type. A key without the
 * scope, or of a principal type the route does not serve, gets
 * `403 insufficient_scope` (one answer for both, so a venue key learns
 * nothing more from an organiser-only route than from a missing scope).
 * A public API route without `@RequireAccess` is refused, never open.
 */
@Injectable()
export class ScopeGuard implements CanActivate {
  private readonly accessOf: (context: ExecutionContext) => RequiredAccess | undefined;

  constructor(reflector: Reflector) {
    this.accessOf = routeMetadata<RequiredAccess>(reflector, ACCESS_KEY);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (audienceOfRequest(request)?.credential !== 'api-key') return true;
    const access = this.accessOf(context);
    // Fail closed: a public route that forgot @RequireAccess serves nobody (start-up also refuses it).
    if (access === undefined) throw new DomainError(ErrorCode.Forbidden, 'This route declares no access rule.');
    const auth = authContextOf(request);
    if (auth === undefined) throw new DomainError(ErrorCode.Unauthorized, UNAUTHENTICATED_MESSAGE);
    if (!access.principals.includes(auth.principal.type)) {
      throw new DomainError(
        ErrorCode.InsufficientScope,
        `This endpoint serves ${access.principals.join(' and ')} keys; this key belongs to ${withArticle(auth.principal.type)}.`,
      );
    }
    if (access.scope !== undefined && !auth.scopes.includes(access.scope)) {
      throw new DomainError(ErrorCode.InsufficientScope, `This key lacks the ${access.scope} scope.`);
    }
    return true;
  }
}

/** `an organiser`, `a venue`, `a professional`. */
function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}
