import fastifyCookie from '@fastify/cookie';
import fastifyCsrfProtection from '@fastify/csrf-protection';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { DASHBOARD_BASE } from './dashboard-paths';
import { sessionOf } from './dashboard-request';

export const CSRF_COOKIE = 'dashboard_csrf';

/** Cookies the dashboard sets: its own path only, never readable by scripts, never sent cross-site, Secure over TLS. */
export const DASHBOARD_COOKIE_OPTIONS = {
  path: DASHBOARD_BASE,
  httpOnly: true,
  sameSite: 'strict',
  secure: 'auto',
} as const;

/** CSRF tokens are bound to the session they were issued in; the sign-in form's to "no session". */
export function csrfUserInfo(request: FastifyRequest): string {
  return sessionOf(request)?.id ?? 'signed-out';
}

/**
 * The Fastify plugins the dashboard needs, registered once from the
 * bootstrap. @fastify/cookie parses the Cookie header of every request (a
 * few microseconds; the public API never reads it); @fastify/csrf-protection
 * only adds `reply.generateCsrf` and `csrfProtection`, which the dashboard's
 * access check calls on its own form posts and nothing else does. Form bodies
 * (urlencoded) are parsed by Nest's Fastify adapter already; the HTTP
 * conventions admit them on dashboard paths only.
 */
export async function registerDashboardPlugins(app: NestFastifyApplication): Promise<void> {
  await app.register(fastifyCookie, {});
  await app.register(fastifyCsrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: CSRF_COOKIE,
    cookieOpts: DASHBOARD_COOKIE_OPTIONS,
    getUserInfo: csrfUserInfo,
    // Sessions live in this process's memory, so a key of this process's lifetime is enough.
    csrfOpts: { hmacKey: randomBytes(32) },
  });
}
