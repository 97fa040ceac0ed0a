import type { FastifyInstance } from 'fastify';
import type { AppConfig } from '../config/app-config';
import { requestIsUnder } from '../common/http/listener';
import { PORTAL_BASE } from './portal-paths';

/**
 * Headers of every portal response: nothing cached anywhere (pages show
 * secrets and another account's data must never be served from a cache),
 * scripts, styles and connections only to this origin, no inline script,
 * framed only by the origins PORTAL_FRAME_ANCESTORS names (none by default).
 */
export function portalHeaders(config: AppConfig): Record<string, string> {
  const ancestors = config.portal.frameAncestors.length === 0 ? "'none'" : config.portal.frameAncestors.join(' ');
  return {
    'cache-control': 'no-store',
    'content-security-policy':
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
      `form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors ${ancestors}`,
    // The fragment never reaches a server; no page of the portal tells another site where it came from either.
    'referrer-policy': 'no-referrer',
    ...(config.portal.frameAncestors.length === 0 ? { 'x-frame-options': 'DENY' } : {}),
  };
}

/**
 * Sets the portal's headers on every response under `/portal`, whoever
 * answered it (a page, a redirect, a refusal from a guard or a hook, a
 * route miss), so no answer of the portal can be cached or framed.
 */
export function installPortalHeaders(fastify: FastifyInstance, config: AppConfig): void {
  const headers = portalHeaders(config);
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (requestIsUnder(request, PORTAL_BASE)) void reply.headers(headers);
    done(null, payload);
  });
}
