import { pathOf } from './listener';

/**
 * `DELETE /v1/webhooks/` names no subscription, and the contract answers it
 * with `400 invalid_argument`, not 404. Nest registers paths without their
 * trailing slash, so the one spelling is routed to the id-less DELETE route
 * (which gives the 400), and recorded in the route table so `Allow` on that
 * path says DELETE. Every other trailing-slash path stays a 404.
 */
export const ID_LESS_DELETE_PATHS: readonly string[] = ['/v1/webhooks/'];

export function routeIdLessDelete(method: string | undefined, url: string): string {
  const path = pathOf(url);
  if (method !== 'DELETE' || !ID_LESS_DELETE_PATHS.includes(path)) return url;
  return `${path.slice(0, -1)}${url.slice(path.length)}`;
}
