import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error';
import { audienceOfRequest, listenerOf } from '../http/listener';
import { routeMetadata } from '../http/route-metadata';
import { RouteMiss } from '../http/route-miss';
import { PORTAL_ACCESS, PORTAL_ROUTE, type PortalAccess, type PortalRouteKind } from './portal-access';

/**
 * The one guard of the portal's routes (credential `portal-session`): they
 * answer on the public listener only, each must say its kind with
 * `@PortalRoute()`, and the portal's access provider decides. Only the
 * portal cookie counts: an API key or the admin token in `Authorization`
 * opens nothing here. A route without the decorator, or a service without
 * the provider, answers 404 as if the route did not exist (fail closed).
 */
@Injectable()
export class PortalSessionGuard implements CanActivate {
  private readonly kindOf: (context: ExecutionContext) => PortalRouteKind | undefined;

  constructor(
    reflector: Reflector,
    @Optional() @Inject(PORTAL_ACCESS) private readonly portal: PortalAccess | null = null,
  ) {
    this.kindOf = routeMetadata<PortalRouteKind>(reflector, PORTAL_ROUTE);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (audienceOfRequest(request)?.credential !== 'portal-session') return true;
    if (listenerOf(request.raw) !== 'public') throw new RouteMiss();
    const kind = this.kindOf(context);
    if (kind === undefined || this.portal === null) throw DomainError.notFound('Page');
    return this.portal.admit(request, kind);
  }
}
