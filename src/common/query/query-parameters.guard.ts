import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { routeMetadata } from '../http/route-metadata';
import { ACCEPTED_QUERY_KEY, ANY_QUERY_PARAMETERS } from './accepts-query.decorator';

/** Unknown query parameters are refused, never ignored (contract: General conventions). */
@Injectable()
export class QueryParametersGuard implements CanActivate {
  private readonly acceptedOf: (context: ExecutionContext) => string[] | undefined;

  constructor(reflector: Reflector) {
    this.acceptedOf = routeMetadata<string[]>(reflector, ACCEPTED_QUERY_KEY);
  }

  canActivate(context: ExecutionContext): boolean {
    const accepted = this.acceptedOf(context) ?? [];
    if (accepted === ANY_QUERY_PARAMETERS) return true;
    const query = context.switchToHttp().getRequest<FastifyRequest>().query as Record<string, unknown> | undefined;
    const unknown = Object.keys(query ?? {}).filter((name) => !accepted.includes(name));
    if (unknown.length > 0) {
      const list = unknown.map((name) => `"${name.slice(0, 64)}"`).join(', ');
      const allowed = accepted.length === 0 ? 'none' : accepted.join(', ');
      throw new DomainError(
        ErrorCode.UnsupportedParameter,
        `Unsupported query parameter ${list}; this endpoint accepts: ${allowed}.`,
      );
    }
    return true;
  }
}
