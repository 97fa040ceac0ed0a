import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { attachPortalAccount, type PortalAccess, type PortalRouteKind } from '../common/auth-context/portal-access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { isFormMediaType, unsupportedBodyMediaType } from '../common/http/body-media-type';
import { PortalAccessRepository, type PortalFlash, type PortalSessionRow } from './portal-access.repository';
import { PORTAL_SESSION_ABSOLUTE_SECONDS, PORTAL_SESSION_IDLE_SECONDS } from './portal-lifetimes';
import { tokenHashOf } from './portal-links.service';
import { PORTAL_BASE } from './portal-paths';
import { attachPortalSession, portalSessionOf } from './portal-request';

export const PORTAL_SESSION_COOKIE = 'portal_session';

/** The portal's cookie: its own path only, never readable by scripts, never sent cross-site, Secure over TLS. */
export const PORTAL_COOKIE_OPTIONS = {
  path: PORTAL_BASE,
  httpOnly: true,
  sameSite: 'strict',
  secure: 'auto',
} as const;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Thrown when a page needs a session the request does not have: the filter shows the "session ended" page. */
export class PortalSessionEnded extends DomainError {
  constructor() {
    super(ErrorCode.Unauthorized, 'This portal session has ended. Ask for a new link to open the portal again.');
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Who may use the portal: whoever opened a link, holding the session cookie
 * it gave. The session is read from PostgreSQL on every request (no cache),
 * so ending it through any instance refuses the next request on every one.
 * Form posts must be forms (urlencoded) and carry the session's CSRF token.
 */
@Injectable()
export class PortalSessionsService implements PortalAccess {
  constructor(private readonly access: PortalAccessRepository) {}

  async admit(request: FastifyRequest, kind: PortalRouteKind): Promise<true> {
    const cookie = request.cookies?.[PORTAL_SESSION_COOKIE];
    const session =
      cookie === undefined || cookie.length === 0 || cookie.length > 200
        ? null
        : await this.access.touchSession(tokenHashOf(cookie), {
            idleSeconds: PORTAL_SESSION_IDLE_SECONDS,
            absoluteSeconds: PORTAL_SESSION_ABSOLUTE_SECONDS,
          });
    attachPortalSession(request, session);
    if (kind === 'entry' || (kind === 'optional' && session === null)) return true;
    if (session === null) throw new PortalSessionEnded();
    attachPortalAccount(request, { type: session.account_type, id: session.account_id });
    if (!SAFE_METHODS.has(request.method)) {
      // Every post past the link's exchange (an `entry` route) is one of the portal's forms: a body that is not a
      // form (JSON, which the HTTP layer reads on every route) is none of theirs, and its fields are not read.
      if (!isFormMediaType(request.headers['content-type'])) {
        throw unsupportedBodyMediaType(request.routeOptions.url ?? '');
      }
      this.checkCsrf(request, session);
    }
    return true;
  }

  setCookie(reply: FastifyReply, sessionToken: string): void {
    void reply.setCookie(PORTAL_SESSION_COOKIE, sessionToken, PORTAL_COOKIE_OPTIONS);
  }

  /**
   * Ends the live session, if any (its CSRF token was checked on admission), and clears its cookie. A sign-out that
   * ends none (no cookie, or one of a session already ended) sets no cookie at all: a forged post from another site
   * carries no cookie (SameSite=Strict), and a browser still deletes the real one when the answer clears it.
   */
  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const session = portalSessionOf(request);
    if (session === null) return;
    await this.access.endSession(session.id);
    attachPortalSession(request, null);
    void reply.clearCookie(PORTAL_SESSION_COOKIE, PORTAL_COOKIE_OPTIONS);
  }

  // A HEAD asks what a GET would answer and changes nothing: it shows nothing, so it takes no message and no
  // showing of a secret (a link checker or a prefetch must not use up "shown once"), and it leaves no message.

  async flash(request: FastifyRequest, flash: PortalFlash): Promise<void> {
    const session = portalSessionOf(request);
    if (session !== null && request.method !== 'HEAD') await this.access.pushFlash(session.id, flash);
  }

  async takeFlashes(request: FastifyRequest): Promise<PortalFlash[]> {
    const session = portalSessionOf(request);
    if (session === null || !session.has_flashes || request.method === 'HEAD') return [];
    return this.access.takeFlashes(session.id);
  }

  allowSecretReveal(session: PortalSessionRow, webhookId: string): Promise<void> {
    return this.access.allowSecretReveal(session.id, webhookId);
  }

  /** Whether the new secret may be shown now; a GET uses up its one showing, a HEAD only asks. */
  async takeSecretReveal(request: FastifyRequest, session: PortalSessionRow, webhookId: string): Promise<boolean> {
    if (request.method === 'HEAD') return session.secret_reveal_webhook_ids.includes(webhookId);
    return this.access.takeSecretReveal(session.id, webhookId);
  }

  /** The form's `_csrf` against the session's token; hashing both sides makes the comparison constant-time. */
  private checkCsrf(request: FastifyRequest, session: PortalSessionRow): void {
    const body = request.body as Record<string, unknown> | undefined;
    const sent = typeof body === 'object' && body !== null ? body['_csrf'] : undefined;
    if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), digest(session.csrf_token))) {
      throw new DomainError(
        ErrorCode.Forbidden,
        'This form has expired or did not come from this portal. Go back, reload the page and try again.',
      );
    }
  }
}
