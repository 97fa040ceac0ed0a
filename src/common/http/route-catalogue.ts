import { Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import { ACCESS_KEY, type RequiredAccess } from '../auth-context/require-access.decorator';
import { bodyUseOf, type BodyUse } from '../validation/validated-body';
import { audienceOfRoute } from './listener';

export interface CatalogueEntry {
  method: string;
  /** Path with `{param}` placeholders, e.g. `/v1/events/{eventId}`. */
  path: string;
  access: RequiredAccess | undefined;
  /** Hidden from the reference and from `GET /v1` (a 400-only helper route). */
  excluded: boolean;
  /** Whether the handler takes a body (see `bodyUseOf`). */
  body: BodyUse;
}

function joinPath(...parts: Array<string | undefined>): string {
  const joined = parts
    .filter((part): part is string => part !== undefined && part !== '' && part !== '/')
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .join('/');
  return `/${joined}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * The public API routes with the access each requires, read from the
 * controllers' own metadata, so `GET /v1` can describe the API without a
 * hand-kept list.
 */
@Injectable()
export class RouteCatalogue {
  private cached: CatalogueEntry[] | null = null;
  private scanned: CatalogueEntry[] | null = null;
  private all: CatalogueEntry[] | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  publicRoutes(): CatalogueEntry[] {
    this.cached ??= this.allApiKeyRoutes().filter((entry) => !entry.excluded);
    return this.cached;
  }

  /**
   * Every route, public or internal, whose handler has no use for an empty
   * body (`METHOD /path/:param`, as Fastify registers it): no body
   * parameter, or an optional one.
   */
  routesWithoutRequiredBody(): string[] {
    this.all ??= this.scan();
    return this.all
      .filter((entry) => entry.body !== 'required')
      .map((entry) => `${entry.method} ${entry.path.replace(/\{(\w+)\}/g, ':$1')}`);
  }

  /** Public API routes that declare no `@RequireAccess`: the service refuses to start with any. */
  routesWithoutAccess(): CatalogueEntry[] {
    return this.allApiKeyRoutes().filter((entry) => entry.access === undefined);
  }

  private allApiKeyRoutes(): CatalogueEntry[] {
    this.all ??= this.scan();
    this.scanned ??= this.all.filter(
      (entry) => audienceOfRoute(entry.path.replace(/\{(\w+)\}/g, ':$1')).credential === 'api-key',
    );
    return this.scanned;
  }

  private scan(): CatalogueEntry[] {
    const entries: CatalogueEntry[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as object | undefined;
      const type = wrapper.metatype as (new (...args: unknown[]) => unknown) | undefined;
      if (instance === undefined || type === undefined) continue;
      const controllerPath = Reflect.getMetadata(PATH_METADATA, type) as string | undefined;
      const classAccess = Reflect.getMetadata(ACCESS_KEY, type) as RequiredAccess | undefined;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function') continue;
        const methodPath = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (methodPath === undefined || method === undefined) continue;
        const excluded = Reflect.getMetadata(DECORATORS.API_EXCLUDE_ENDPOINT, handler) as
          | { disable?: boolean }
          | undefined;
        entries.push({
          excluded: excluded?.disable === true,
          method: RequestMethod[method],
          path: joinPath(controllerPath, methodPath),
          body: bodyUseOf(prototype, name),
          access: (Reflect.getMetadata(ACCESS_KEY, handler) as RequiredAccess | undefined) ?? classAccess,
        });
      }
    }
    return entries.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }
}
