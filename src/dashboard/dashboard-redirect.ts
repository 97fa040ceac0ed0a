import type { FastifyRequest } from 'fastify';
import type { RouteTable } from '../common/http/route-table';
import { DASHBOARD_BASE, SIGN_IN_PATH, withQuery } from './dashboard-paths';

/**
 * Thrown to answer with `303 See Other`: after a form post (so a reload does
 * not post again) and when a page needs a session it does not have. The
 * dashboard's exception filter turns it into the redirect.
 */
export class DashboardRedirect extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
    this.name = 'DashboardRedirect';
  }
}

/** Where a signed-in operator starts, and goes when there is no page of theirs to return to. */
export const HOME_PATH = `${DASHBOARD_BASE}/accounts`;

export const SIGN_OUT_PATH = `${DASHBOARD_BASE}/sign-out`;

/** No address of the dashboard is longer; a longer one is no page it made. */
const MAX_RETURN_LENGTH = 2000;

/** Printable ASCII without the space: what a Location header carries as it is, with no control character. */
const LOCATION_TEXT = /^[\x21-\x7e]+$/;

function hasControlCharacter(text: string): boolean {
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * `text` as a page of this dashboard to send the browser back to (a path and
 * its query), or null. The text comes from the browser (a form field, a
 * query, the Referer), so it is held to what the dashboard's own addresses
 * look like: it starts with the dashboard's prefix (so no scheme and no
 * host), has no `//`, backslash, fragment, space or control character,
 * encoded or not, and no `.` or `..` segment that could climb out of the
 * prefix once the browser resolves it. Anything else, however harmless it
 * may look, is refused: a return address is never an open redirect.
 */
export function dashboardReturnPath(text: unknown): string | null {
  if (typeof text !== 'string' || text.length > MAX_RETURN_LENGTH || !LOCATION_TEXT.test(text)) return null;
  if (text.includes('//') || text.includes('\\') || text.includes('#')) return null;
  if (text !== DASHBOARD_BASE && !text.startsWith(`${DASHBOARD_BASE}/`) && !text.startsWith(`${DASHBOARD_BASE}?`)) {
    return null;
  }
  const path = text.split('?', 1)[0] ?? '';
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return null;
    }
    if (decoded === '.' || decoded === '..' || /[/\\]/.test(decoded) || hasControlCharacter(decoded)) return null;
  }
  // Signing in or out again is no page to return to.
  if (path === SIGN_IN_PATH || path === SIGN_OUT_PATH) return null;
  return text;
}

/**
 * `text` as a dashboard page to return to (dashboardReturnPath) that is
 * opened with GET, as the route table has it: an address only a form is
 * sent to is never returned to, since a redirect there would either post
 * nothing or find no page.
 */
export function dashboardReturnPage(text: unknown, routes: RouteTable): string | null {
  const returned = dashboardReturnPath(text);
  if (returned === null) return null;
  const path = returned.split('?', 1)[0] ?? '';
  return routes.allowedMethods(path, 'admin').includes('GET') ? returned : null;
}

/**
 * The path and query of the page of this host the browser says the request
 * came from (Referer; the dashboard's pages send it to this origin only), or
 * null. Only its path and query are kept, never its origin, and what
 * becomes of them is checked as any other return address.
 */
export function refererPathOf(request: FastifyRequest): string | null {
  const referer = request.headers.referer;
  if (typeof referer !== 'string' || referer.length > MAX_RETURN_LENGTH) return null;
  try {
    const url = new URL(referer);
    // A page of another site is no page the operator was on here, whatever its path says.
    if (url.host !== request.headers.host) return null;
    return `${url.pathname}${url.search}`;
  } catch {
    return null;
  }
}

/** Why the sign-in form was shown instead of a page: said on it, in words fixed here (the query only names one). */
export const SIGN_IN_REASONS = {
  'session-ended': 'Your session ended; sign in again to go on.',
  'form-not-sent': 'Your session ended before your form was sent, so nothing was changed; sign in again to go on.',
} as const;
export type SignInReason = keyof typeof SIGN_IN_REASONS;

export function signInReasonOf(text: unknown): SignInReason | null {
  return typeof text === 'string' && Object.hasOwn(SIGN_IN_REASONS, text) ? (text as SignInReason) : null;
}

/** The sign-in form's address, naming the page to return to after the sign-in and why the form is shown. */
export function signInPath(next: string | null, why: SignInReason | null): string {
  return withQuery(SIGN_IN_PATH, { next, why });
}
