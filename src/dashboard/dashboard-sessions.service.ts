import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { DashboardAccess, DashboardRouteKind } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DASHBOARD_COOKIE_OPTIONS } from './dashboard-plugins';
import { SIGN_IN_PATH } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { attachSession, sessionOf } from './dashboard-request';
import { keepOnce, SessionStore, takeOnce, type DashboardSession, type Flash } from './session-store';

export const SESSION_COOKIE = 'dashboard_session';
/** A console left alone for half an hour signs out; a working day is the most any session lasts. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function cookieOf(request: FastifyRequest): string | undefined {
  return request.cookies?.[SESSION_COOKIE];
}

/**
 * Who may use the dashboard: a person who typed the admin token once into
 * the sign-in form. The admin-token guard hands every `@DashboardRoute()`
 * request to `allows`, which finds the session, sends visitors without one
 * to the sign-in form (303), and checks the CSRF token of every form post.
 */
@Injectable()
export class DashboardSessionsService implements DashboardAccess {
  private readonly store = new SessionStore({ idleMs: SESSION_IDLE_MS, absoluteMs: SESSION_ABSOLUTE_MS });
  private readonly expected: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.adminToken === null ? null : digest(config.adminToken);
  }

  async allows(request: FastifyRequest, kind: DashboardRouteKind): Promise<boolean> {
    const session = this.store.touch(cookieOf(request));
    attachSession(request, session);
    if (kind === 'session' && session === null) throw new DashboardRedirect(SIGN_IN_PATH);
    if (!SAFE_METHODS.has(request.method)) await this.checkCsrf(request);
    return true;
  }

  /** Hashing both sides first makes the comparison constant-time whatever the lengths. */
  tokenMatches(typed: unknown): boolean {
    if (this.expected === null || typeof typed !== 'string' || typed.length === 0 || typed.length > 1000) return false;
    return timingSafeEqual(digest(typed.trim()), this.expected);
  }

  /** A fresh session on every sign-in (never the one the browser came with: no session fixation). */
  signIn(request: FastifyRequest, reply: FastifyReply): DashboardSession {
    this.store.destroy(cookieOf(request));
    const { token, session } = this.store.create();
    void reply.setCookie(SESSION_COOKIE, token, DASHBOARD_COOKIE_OPTIONS);
    attachSession(request, session);
    return session;
  }

  signOut(request: FastifyRequest, reply: FastifyReply): void {
    this.store.destroy(cookieOf(request));
    attachSession(request, null);
    void reply.clearCookie(SESSION_COOKIE, DASHBOARD_COOKIE_OPTIONS);
  }

  flash(request: FastifyRequest, flash: Flash): void {
    sessionOf(request)?.flashes.push(flash);
  }

  takeFlashes(request: FastifyRequest): Flash[] {
    const session = sessionOf(request);
    if (session === null) return [];
    return session.flashes.splice(0, session.flashes.length);
  }

  /**
   * Keeps a new key or secret for the page at `path` (the page a form post
   * redirects to), so that it travels neither in the URL nor in a form. The
   * oldest untaken value goes first when a session keeps too many.
   */
  putFlash(request: FastifyRequest, path: string, value: string): void {
    const session = sessionOf(request);
    if (session !== null) keepOnce(session, path, value);
  }

  /** The value kept for the page at `path`, forgotten as it is read: a second request of that page gets null. */
  takeFlash(request: FastifyRequest, path: string): string | null {
    const session = sessionOf(request);
    return session === null ? null : takeOnce(session, path);
  }

  /**
   * @fastify/csrf-protection's check, called here rather than as a hook so
   * that a missing session redirects first and a refusal is an HTML page of
   * the dashboard. It answers through `reply.send(error)`, which this reply
   * stand-in turns into a rejection.
   */
  private checkCsrf(request: FastifyRequest): Promise<void> {
    return new Promise((resolve, reject) => {
      const refuse = (): void =>
        reject(
          new DomainError(
            ErrorCode.Forbidden,
            'This form has expired or did not come from this dashboard. Go back, reload the page and try again.',
          ),
        );
      const reply = { send: refuse } as unknown as FastifyReply;
      request.server.csrfProtection(request, reply, () => resolve());
    });
  }
}
