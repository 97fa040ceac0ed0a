import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { attachAuthContext } from '../common/auth-context/auth.decorator';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { listenerOf } from '../common/http/listener';
import { ApiKeysService } from './api-keys.service';

/** Every public route needs `Authorization: Bearer <API_KEY>`; all failures look alike. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly keys: ApiKeysService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (listenerOf(request.raw) === 'admin') return true;
    const auth = await this.keys.authenticate(request.headers.authorization);
    if (auth === null) {
      throw new DomainError(ErrorCode.Unauthorized, 'A valid API key is required: Authorization: Bearer <API_KEY>.');
    }
    attachAuthContext(request, auth);
    return true;
  }
}
