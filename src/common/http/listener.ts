import type { IncomingMessage } from 'node:http';

/**
 * One Fastify instance serves two sockets. The admin server tags each raw
 * request it accepts; anything untagged came through the public listener.
 * The tag is set by the socket that accepted the connection, so nothing a
 * caller writes in the request can change it.
 */
const ADMIN_LISTENER = Symbol('admin-listener');

export type Listener = 'public' | 'admin';

/** The credential a route requires, decided by the route, never by the request. */
export type Credential = 'api-key' | 'admin-token' | 'portal-session' | 'none';

export interface RouteAudience {
  /** The listeners whose sockets may reach the route. */
  listeners: readonly Listener[];
  credential: Credential;
}

export function markAdminRequest(raw: IncomingMessage): void {
  (raw as IncomingMessage & { [ADMIN_LISTENER]?: true })[ADMIN_LISTENER] = true;
}

export function listenerOf(raw: IncomingMessage): Listener {
  return (raw as IncomingMessage & { [ADMIN_LISTENER]?: true })[ADMIN_LISTENER] === true ? 'admin' : 'public';
}

const INTERNAL: RouteAudience = { listeners: ['admin'], credential: 'admin-token' };
const PROBE: RouteAudience = { listeners: ['public', 'admin'], credential: 'none' };
const REFERENCE: RouteAudience = { listeners: ['public'], credential: 'none' };
const PUBLIC_API: RouteAudience = { listeners: ['public'], credential: 'api-key' };
const PORTAL: RouteAudience = { listeners: ['public'], credential: 'portal-session' };

/** Routes that answer without a credential. Anything not named here needs one (fail closed). */
const PROBES = new Set(['/healthz', '/readyz']);
const REFERENCE_ROUTES = /^\/(?:openapi\.(?:json|yaml)|docs(?:\/.*)?)$/;

/**
 * Who may reach a route, from the route pattern it was registered with
 * (`request.routeOptions.url`, e.g. `/internal/keys/:keyId`): text written by
 * this codebase at start, never the URL a caller sent. Internal routes live
 * under `/internal` and answer only on the admin listener with the admin
 * token; the probes answer on both without a credential; the API reference
 * on the public listener without one; the webhook portal's pages (under
 * `/portal`) on the public listener with a portal session, and nothing
 * else; every other route is the public API and needs an API key.
 */
export function audienceOfRoute(pattern: string): RouteAudience {
  let audience = AUDIENCES.get(pattern);
  if (audience === undefined) {
    audience = classify(pattern);
    // Patterns are the registered routes, a fixed set; the bound only guards against a caller passing URLs.
    if (AUDIENCES.size < MAX_REMEMBERED_PATTERNS) AUDIENCES.set(pattern, audience);
  }
  return audience;
}

/** Each route pattern is classified once: several hooks and guards ask on every request. */
const AUDIENCES = new Map<string, RouteAudience>();
const MAX_REMEMBERED_PATTERNS = 1_000;

function classify(pattern: string): RouteAudience {
  if (pattern === '/internal' || pattern.startsWith('/internal/')) return INTERNAL;
  if (PROBES.has(pattern)) return PROBE;
  if (REFERENCE_ROUTES.test(pattern)) return REFERENCE;
  if (isPortalRoute(pattern)) return PORTAL;
  return PUBLIC_API;
}

export function routeServes(pattern: string, listener: Listener): boolean {
  return audienceOfRoute(pattern).listeners.includes(listener);
}

/** Dashboard pages (HTML forms, session cookie), by the route pattern they registered. */
export function isDashboardRoute(pattern: string): boolean {
  return pattern === '/internal/dashboard' || pattern.startsWith('/internal/dashboard/');
}

/** The webhook portal's pages (HTML forms, portal session cookie), by the route pattern they registered. */
export function isPortalRoute(pattern: string): boolean {
  return pattern === '/portal' || pattern.startsWith('/portal/');
}

/** Routes whose HTML forms post urlencoded bodies: the dashboard's and the portal's; no other route parses them. */
export function acceptsFormBodies(pattern: string): boolean {
  return isDashboardRoute(pattern) || isPortalRoute(pattern);
}

export function pathOf(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

/**
 * The routing locates the `v1` segment, so a prefix in front of it is
 * tolerated: `/api/v1/me` and `/x/y/v1/me` route as `/v1/me`.
 */
export function stripPrefixBeforeVersion(url: string): string {
  const path = pathOf(url);
  const query = url.slice(path.length);
  const segments = path.split('/');
  const versionAt = segments.indexOf('v1');
  if (versionAt <= 1) return url;
  return `/${segments.slice(versionAt).join('/')}${query}`;
}

/** A prefix of plain path segments: no empty one (`//host`), no scheme (`http://x`), no backslash. */
const PLAIN_PATH_PREFIX = /^(?:\/[^/\\:]+)+$/;

/**
 * The path prefix in front of the v1 segment a request was sent with (`/api`
 * for `/api/v1/me`), or ''. Echoed in a `Location`, so only a prefix of
 * plain path segments is: `//evil.example/v1/…` or an absolute-form request
 * target (`http://x/v1/…`) routes all the same, and gets '' here, never a
 * header that sends its reader to another host.
 */
export function prefixBeforeVersion(url: string): string {
  const prefix = url.slice(0, url.length - stripPrefixBeforeVersion(url).length);
  return PLAIN_PATH_PREFIX.test(prefix) ? prefix : '';
}

/** The audience of the route a request matched; null when it matched none (a 404 or 405 follows). */
export function audienceOfRequest(request: { routeOptions: { url?: string | undefined } }): RouteAudience | null {
  const pattern = request.routeOptions.url;
  return pattern === undefined ? null : audienceOfRoute(pattern);
}

/**
 * Whether a request is for `base` or below it, as its URL was written or as
 * the router matched it (which decodes it first: `/%64ocs` is `/docs`).
 * For hooks that add a section's headers to every answer under it.
 */
export function requestIsUnder(
  request: { url: string; routeOptions: { url?: string | undefined } },
  base: string,
): boolean {
  return [pathOf(request.url), request.routeOptions.url ?? ''].some(
    (path) => path === base || path.startsWith(`${base}/`),
  );
}
