import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { listenerOf } from '../http/listener';
import { DASHBOARD_ACCESS, DASHBOARD_ROUTE, type DashboardAccess, type DashboardRouteKind } from './dashboard-access';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The internal listener's only credential: `Authorization: Bearer <ADMIN_TOKEN>`,
 * compared in constant time. `@DashboardRoute()` handlers are the one
 * exception: they are asked of the `DASHBOARD_ACCESS` provider (sessions),
 * and refused when none is registered.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | null;
  private dashboardAccess: DashboardAccess | null | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
  ) {
    this.expected = config.adminToken === null ? null : digest(config.adminToken);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (listenerOf(request.raw) !== 'admin') return true;
    const dashboardKind = this.reflector.getAllAndOverride<DashboardRouteKind | undefined>(DASHBOARD_ROUTE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (dashboardKind !== undefined) {
      const access = this.resolveDashboardAccess();
      if (access === null || !(await access.allows(request, dashboardKind))) {
        throw new DomainError(ErrorCode.Unauthorized, 'Sign in to the dashboard first.');
      }
      return true;
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/.exec(header) : null;
    // Hashing both sides first makes the comparison constant-time whatever the lengths.
    if (this.expected === null || match?.[1] === undefined || !timingSafeEqual(digest(match[1]), this.expected)) {
      throw new DomainError(ErrorCode.Unauthorized, 'A valid admin token is required.');
    }
    return true;
  }

  private resolveDashboardAccess(): DashboardAccess | null {
    if (this.dashboardAccess === undefined) {
      try {
        this.dashboardAccess = this.moduleRef.get<DashboardAccess>(DASHBOARD_ACCESS, { strict: false });
      } catch {
        this.dashboardAccess = null;
      }
    }
    return this.dashboardAccess;
  }
}
