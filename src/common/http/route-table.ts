import { routeServes, type Listener } from './listener';

export interface RouteEntry {
  method: string;
  /** The Fastify path pattern, e.g. `/v1/events/:eventId`. */
  path: string;
}

interface CompiledRoute extends RouteEntry {
  pattern: RegExp;
}

function compile(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The routes the HTTP server really has, recorded as Fastify registers them
 * (the `onRoute` hook of the HTTP conventions). It answers "which methods
 * does this path accept" for 405 responses, so that is no hand-kept list;
 * the tests read every route of a listener from it. `GET /v1` describes the
 * API from the controllers' metadata instead (RouteCatalogue), which also
 * carries the access each route requires.
 */
export class RouteTable {
  private readonly routes: CompiledRoute[] = [];

  record(method: string | string[], path: string): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const upper = one.toUpperCase();
      if (this.routes.some((route) => route.method === upper && route.path === path)) continue;
      this.routes.push({ method: upper, path, pattern: compile(path) });
    }
  }

  /** Methods accepted by a concrete path on one listener; HEAD wherever GET is. */
  allowedMethods(concretePath: string, listener: Listener): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (!routeServes(route.path, listener)) continue;
      if (route.pattern.test(concretePath)) methods.add(route.method);
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b));
  }

  /** Every route of one listener, HEAD routes folded into their GET (the route-coverage tests walk these). */
  entries(listener: Listener): RouteEntry[] {
    return this.routes
      .filter((route) => routeServes(route.path, listener) && route.method !== 'HEAD')
      .map(({ method, path }) => ({ method, path }));
  }
}
