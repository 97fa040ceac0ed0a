import type { IncomingMessage } from 'node:http';

/**
 * One Fastify instance serves two sockets. The admin server tags each raw
 * request it accepts; anything untagged came through the public listener.
 */
const ADMIN_LISTENER = Symbol('admin-listener');

export type Listener = 'public' | 'admin';

export function markAdminRequest(raw: IncomingMessage): void {
  (raw as IncomingMessage & { [ADMIN_LISTENER]?: true })[ADMIN_LISTENER] = true;
}

export function listenerOf(raw: IncomingMessage): Listener {
  return (raw as IncomingMessage & { [ADMIN_LISTENER]?: true })[ADMIN_LISTENER] === true ? 'admin' : 'public';
}

/** Internal routes live under `/internal` and answer only on the admin listener; everything else only on the public one. */
export function listenerForPath(path: string): Listener {
  return path === '/internal' || path.startsWith('/internal/') ? 'admin' : 'public';
}

/** The dashboard's pages (admin listener only, like every `/internal` path); its forms post urlencoded bodies. */
export function isDashboardPath(path: string): boolean {
  return path === '/internal/dashboard' || path.startsWith('/internal/dashboard/');
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
