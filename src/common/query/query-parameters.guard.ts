import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { ACCEPTED_QUERY_KEY } from './accepts-query.decorator';

/** Unknown query parameters are refused, never ignored (contract: General conventions). */
@Injectable()
export class QueryParametersGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const accepted =
      this.reflector.getAllAndOverride<string[] | undefined>(ACCEPTED_QUERY_KEY, [
        context.getHandler(),
        context.getClass(),
      ]) ?? [];
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
