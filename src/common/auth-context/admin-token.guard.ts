import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { listenerOf } from '../http/listener';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The internal listener's only credential: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.adminToken === null ? null : digest(config.adminToken);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (listenerOf(request.raw) !== 'admin') return true;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/.exec(header) : null;
    // Hashing both sides first makes the comparison constant-time whatever the lengths.
    if (this.expected === null || match?.[1] === undefined || !timingSafeEqual(digest(match[1]), this.expected)) {
      throw new DomainError(ErrorCode.Unauthorized, 'A valid admin token is required.');
    }
    return true;
  }
}
