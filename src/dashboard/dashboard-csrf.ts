import Tokens from '@fastify/csrf';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CSRF_COOKIE, DASHBOARD_COOKIE_OPTIONS } from './dashboard-cookies';
import { sessionOf } from './dashboard-request';

// No user info and no key of this process: the secret alone (per session, in its row) makes and checks a token.
const tokens = new Tokens({ userInfo: false });

/** Where a form's token travels: the `_csrf` field, or one of the usual headers for scripts. */
const TOKEN_HEADERS = ['csrf-token', 'xsrf-token', 'x-csrf-token', 'x-xsrf-token'];

/** A new CSRF secret for a session, kept in its row so every instance checks its forms alike. */
export function newCsrfSecret(): string {
  return tokens.secretSync();
}

/**
 * The token a page's forms carry: made from the session's secret, or, before
 * sign-in, from a secret in a cookie of its own (so a token of one session is
 * refused in another, and the sign-in form's token in any session).
 */
export function csrfTokenFor(request: FastifyRequest, reply: FastifyReply): string {
  const session = sessionOf(request);
  if (session !== null) return tokens.create(session.csrfSecret);
  // A request refused before the cookie plugin read its cookies (a route miss, a URL the router cannot read) is
  // answered with an error page, which has no form to protect.
  const jar = (request as { cookies?: Record<string, string | undefined> | null }).cookies;
  if (jar === undefined || jar === null) return '';
  let secret = jar[CSRF_COOKIE];
  if (secret === undefined || secret === '') {
    secret = tokens.secretSync();
    void reply.setCookie(CSRF_COOKIE, secret, DASHBOARD_COOKIE_OPTIONS);
  }
  return tokens.create(secret);
}

function tokenOf(request: FastifyRequest): unknown {
  const field = (request.body as Record<string, unknown> | null | undefined)?.['_csrf'];
  if (field !== undefined) return field;
  for (const name of TOKEN_HEADERS) {
    const header = request.headers[name];
    if (header !== undefined) return header;
  }
  return undefined;
}

/** Whether the request carries a token made from its session's secret (or, signed out, its cookie's). */
export function csrfTokenValid(request: FastifyRequest): boolean {
  const secret = sessionOf(request)?.csrfSecret ?? request.cookies[CSRF_COOKIE];
  const token = tokenOf(request);
  if (secret === undefined || secret === '' || typeof token !== 'string' || token === '') return false;
  return tokens.verify(secret, token);
}
