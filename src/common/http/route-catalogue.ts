import { Injectable, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import { ACCESS_KEY, type RequiredAccess } from '../auth-context/require-access.decorator';
import { listenerForPath } from './listener';

export interface CatalogueEntry {
  method: string;
  /** Path with `{param}` placeholders, e.g. `/v1/events/{eventId}`. */
  path: string;
  access: RequiredAccess | undefined;
}

function joinPath(...parts: Array<string | undefined>): string {
  const joined = parts
    .filter((part): part is string => part !== undefined && part !== '' && part !== '/')
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .join('/');
  return `/${joined}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * The public routes with the access each requires, read from the
 * controllers' own metadata, so `GET /v1` can describe the API without a
 * hand-kept list.
 */
@Injectable()
export class RouteCatalogue {
  private cached: CatalogueEntry[] | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  publicRoutes(): CatalogueEntry[] {
    this.cached ??= this.scan().filter((entry) => listenerForPath(entry.path) === 'public');
    return this.cached;
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
        // Routes hidden from the reference (a 400-only helper route) stay out of the endpoint list too.
        const excluded = Reflect.getMetadata(DECORATORS.API_EXCLUDE_ENDPOINT, handler) as
          { disable?: boolean } | undefined;
        if (excluded?.disable === true) continue;
        entries.push({
          method: RequestMethod[method],
          path: joinPath(controllerPath, methodPath),
          access: (Reflect.getMetadata(ACCESS_KEY, handler) as RequiredAccess | undefined) ?? classAccess,
        });
      }
    }
    return entries.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }
}
