import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DashboardAccess, DashboardRouteKind } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ScheduledJobs } from '../database/jobs/scheduled-jobs';
import { DASHBOARD_COOKIE_OPTIONS, SESSION_COOKIE } from './dashboard-cookies';
import { csrfTokenValid, newCsrfSecret } from './dashboard-csrf';
import { RouteTable } from '../common/http/route-table';
import { pathOf } from '../common/http/listener';
import { SIGN_IN_PATH } from './dashboard-paths';
import {
  DashboardRedirect,
  SIGN_OUT_PATH,
  dashboardReturnPage,
  dashboardReturnPath,
  refererPathOf,
  signInPath,
} from './dashboard-redirect';
import { attachedSession, attachSession, sessionOf } from './dashboard-request';
import { DashboardSessionRepository, type SessionLifetimes } from './dashboard-session.repository';
import { OneTimeSeal } from './one-time-seal';
import {
  change,
  dropFlashes,
  eachOnceKey,
  keepFlash,
  keepOnce,
  newFlash,
  takeOnce,
  waitsFor,
  type DashboardSession,
  type Flash,
  type SessionState,
} from './session-store';

export { SESSION_COOKIE } from './dashboard-cookies';
/** A console left alone for half an hour signs out; a working day is the most any session lasts. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** The idle clock is written at most twice a minute: a session ends at most this much before its half hour. */
export const SESSION_TOUCH_MS = 30 * 1000;

const LIFETIMES: SessionLifetimes = {
  idleSeconds: SESSION_IDLE_MS / 1000,
  absoluteSeconds: SESSION_ABSOLUTE_MS / 1000,
  touchSeconds: SESSION_TOUCH_MS / 1000,
};

/** Expired rows deleted per sign-in: enough to keep up with the people signing in, never a long statement. */
const PURGE_ON_SIGN_IN = 100;
/** Expired rows deleted per scheduled purge, which runs on one instance at a time (ScheduledJobs). */
const PURGE_BATCH = 1000;
export const SESSION_PURGE_JOB = 'dashboard-session-purge';
const SESSION_PURGE_EVERY_MS = 10 * 60 * 1000;
/** Longer values are no cookie this service issued (it issues 43 characters); refused before hashing. */
const MAX_COOKIE_LENGTH = 200;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function cookieOf(request: FastifyRequest): string | undefined {
  const value = request.cookies?.[SESSION_COOKIE];
  return value === undefined || value.length === 0 || value.length > MAX_COOKIE_LENGTH ? undefined : value;
}

/** Work a request started on its session (a sign-in's row, a sign-out's delete), finished before the answer leaves. */
const PENDING = Symbol('dashboard-session-pending');
type RequestWithPending = FastifyRequest & { [PENDING]?: Array<Promise<unknown>> };

/**
 * Who may use the dashboard: a person who typed the admin token once into
 * the sign-in form. The admin-token guard hands every `@DashboardRoute()`
 * request to `allows`, which finds the session, sends visitors without one
 * to the sign-in form (303), and checks the CSRF token of every form post.
 *
 * Sessions are rows of `dashboard_session`, shared by every instance and read
 * on every dashboard request. The handlers' calls stay synchronous: what a
 * request changes is written by `settle`, which the dashboard plugins run
 * before the answer is sent, so the next request (on any instance) sees it.
 */
@Injectable()
export class DashboardSessionsService implements DashboardAccess, OnModuleInit {
  private readonly expected: Buffer | null;
  /** Which admin token a session was opened with: an HMAC keyed by it, so a new token ends the old sessions. */
  private readonly adminTokenId: Buffer;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sessions: DashboardSessionRepository,
    private readonly jobs: ScheduledJobs,
    private readonly routes: RouteTable,
  ) {
    this.expected = config.adminToken === null ? null : digest(config.adminToken);
    this.adminTokenId = createHmac('sha256', config.adminToken ?? '')
      .update('dashboard sessions')
      .digest();
  }

  onModuleInit(): void {
    this.jobs.every(SESSION_PURGE_JOB, SESSION_PURGE_EVERY_MS, () => this.purgeExpired());
  }

  async allows(request: FastifyRequest, kind: DashboardRouteKind): Promise<boolean> {
    const cookieValue = cookieOf(request);
    const tokenHash = cookieValue === undefined ? null : digest(cookieValue);
    const found = tokenHash === null ? null : await this.sessions.touch(tokenHash, this.adminTokenId, LIFETIMES);
    if (found === null || cookieValue === undefined || tokenHash === null) {
      attachSession(request, null);
    } else {
      const oneTime = await this.claimOneTime(request, tokenHash, found.state);
      const session = sessionFrom(cookieValue, found.csrfSecret, { flashes: found.state.flashes, oneTime });
      attachSession(request, { session, cookieValue });
    }
    if (kind === 'session' && found === null) throw new DashboardRedirect(this.signInFor(request));
    if (!SAFE_METHODS.has(request.method) && !csrfTokenValid(request)) {
      throw new DomainError(
        ErrorCode.Forbidden,
        'This form has expired or did not come from this dashboard. Go back, reload the page and try again.',
      );
    }
    return true;
  }

  /**
   * The sign-in form for a request that needs a session and has none: it
   * names the page to return to after the sign-in, and says why when the
   * operator was signed in a moment ago. A page opened with GET is returned
   * to; a form's post is never repeated (what it asked was not done), so it
   * returns to the page the form was on, as the browser names it. Signed in
   * a moment ago: the browser still sends the cookie of a session that has
   * ended (idle, too old, signed out on another instance), or, once a
   * sign-out in another tab has dropped the cookie, it still acts from a
   * page of the dashboard (a form, a refresh of the log, a link followed).
   */
  private signInFor(request: FastifyRequest): string {
    // A sign-out whose session has already ended has nothing left to do: it leads where a sign-out leads.
    if (pathOf(request.url) === SIGN_OUT_PATH) return SIGN_IN_PATH;
    const posted = !SAFE_METHODS.has(request.method);
    const cameFrom = refererPathOf(request);
    const next = dashboardReturnPage(posted ? cameFrom : request.url, this.routes);
    const fromPage = dashboardReturnPath(cameFrom) !== null;
    const ended = posted || cookieOf(request) !== undefined || request.headers['hx-request'] === 'true' || fromPage;
    return signInPath(next, !ended ? null : posted ? 'form-not-sent' : 'session-ended');
  }

  /** Hashing both sides first makes the comparison constant-time whatever the lengths. */
  tokenMatches(typed: unknown): boolean {
    if (this.expected === null || typeof typed !== 'string' || typed.length === 0 || typed.length > 1000) return false;
    return timingSafeEqual(digest(typed.trim()), this.expected);
  }

  /** A fresh session on every sign-in (never the one the browser came with: no session fixation). */
  signIn(request: FastifyRequest, reply: FastifyReply): DashboardSession {
    const previous = cookieOf(request);
    const cookieValue = randomBytes(32).toString('base64url');
    const session = sessionFrom(cookieValue, newCsrfSecret(), { flashes: [], oneTime: new Map() });
    this.pending(request, async () => {
      if (previous !== undefined) await this.sessions.delete(digest(previous));
      await this.sessions.insert(digest(cookieValue), this.adminTokenId, session.csrfSecret, LIFETIMES);
      // Sign-ins are when expired sessions are swept, as the people using the dashboard come and go.
      await this.sessions.purgeExpired(PURGE_ON_SIGN_IN);
    });
    void reply.setCookie(SESSION_COOKIE, cookieValue, DASHBOARD_COOKIE_OPTIONS);
    attachSession(request, { session, cookieValue });
    return session;
  }

  signOut(request: FastifyRequest, reply: FastifyReply): void {
    const cookieValue = cookieOf(request);
    if (cookieValue !== undefined) this.pending(request, () => this.sessions.delete(digest(cookieValue)));
    attachSession(request, null);
    void reply.clearCookie(SESSION_COOKIE, DASHBOARD_COOKIE_OPTIONS);
  }

  flash(request: FastifyRequest, flash: Flash): void {
    const session = sessionOf(request);
    if (session === null) return;
    const kept = newFlash(flash);
    change(session, (state) => keepFlash(state, kept));
  }

  takeFlashes(request: FastifyRequest): Flash[] {
    const session = sessionOf(request);
    if (session === null || session.flashes.length === 0) return [];
    const taken = session.flashes;
    const ids = new Set(taken.map((flash) => flash.id));
    change(session, (state) => dropFlashes(state, ids));
    return taken.map(({ kind, text }) => ({ kind, text }));
  }

  /**
   * Keeps a new key or secret for the page at `path` (the page a form post
   * redirects to), so that it travels neither in the URL nor in a form. It is
   * stored sealed with a key from the cookie value, which the database never
   * sees. The oldest untaken value goes first when a session keeps too many.
   */
  putFlash(request: FastifyRequest, path: string, value: string): void {
    const found = attachedSession(request);
    if (found === null) return;
    const sealed = new OneTimeSeal(found.cookieValue).seal(path, value);
    change(found.session, (state) => keepOnce(state, path, sealed));
  }

  /**
   * Keeps one more value for the page at `path`, beside any it already waits
   * for (putFlash's replaces): a page that shows each of several values, as
   * the account page shows every portal link made since it was last shown.
   */
  addFlash(request: FastifyRequest, path: string, value: string): void {
    this.putFlash(request, eachOnceKey(path, randomBytes(6).toString('hex')), value);
  }

  /** Every value kept for the page at `path` (addFlash's and putFlash's), oldest first, forgotten as they are read. */
  takeEachFlash(request: FastifyRequest, path: string): string[] {
    const found = attachedSession(request);
    if (found === null) return [];
    const seal = new OneTimeSeal(found.cookieValue);
    const keys = [...found.session.oneTime.keys()].filter((key) => waitsFor(key, path));
    return keys.flatMap((key) => {
      const sealed = takeOnce(found.session, key);
      const opened = sealed === null ? null : seal.open(key, sealed);
      return opened === null ? [] : [opened];
    });
  }

  /** The value kept for the page at `path`, forgotten as it is read: a second request of that page gets null. */
  takeFlash(request: FastifyRequest, path: string): string | null {
    const found = attachedSession(request);
    const sealed = found === null ? null : takeOnce(found.session, path);
    return found === null || sealed === null ? null : new OneTimeSeal(found.cookieValue).open(path, sealed);
  }

  /** Deletes a bounded batch of expired sessions (a scheduled job may call this); returns how many. */
  purgeExpired(): Promise<number> {
    return this.sessions.purgeExpired(PURGE_BATCH);
  }

  /**
   * Finishes what the request started and writes what it changed; null when
   * it touched no session (every request that is not the dashboard's), so
   * the hook costs nothing there. A failure here fails the request: a
   * session half written is not answered as if it were fine.
   */
  settle(request: FastifyRequest): Promise<void> | null {
    const pending = (request as RequestWithPending)[PENDING];
    const found = attachedSession(request);
    const changes = found?.session.changes ?? [];
    if (pending === undefined && changes.length === 0) return null;
    return (async () => {
      delete (request as RequestWithPending)[PENDING];
      if (pending !== undefined) await Promise.all(pending);
      if (found !== null && changes.length > 0) {
        const written = changes.splice(0, changes.length);
        await this.sessions.modify(digest(found.cookieValue), (state) => {
          for (const apply of written) apply(state);
        });
      }
    })();
  }

  /**
   * A GET of the page a value waits for takes it from the row before the
   * handler runs, row locked: of two requests of that page at once (two
   * tabs, two instances) only one gets it, as "shown once" promises. Any
   * other request (a HEAD included) takes nothing and costs no write.
   */
  private async claimOneTime(
    request: FastifyRequest,
    tokenHash: Buffer,
    state: SessionState,
  ): Promise<Map<string, string>> {
    const claimed = new Map<string, string>();
    if (request.method !== 'GET') return claimed;
    const path = request.url.split('?', 1)[0] ?? '';
    if (![...state.oneTime.keys()].some((key) => waitsFor(key, path))) return claimed;
    const taken = await this.sessions.modify(tokenHash, (stored) =>
      [...stored.oneTime.keys()]
        .filter((key) => waitsFor(key, path))
        .map((key) => [key, takeOnce(stored, key)] as const),
    );
    for (const [key, sealed] of taken ?? []) if (sealed !== null) claimed.set(key, sealed);
    return claimed;
  }

  /** Starts `work` now; `settle` waits for it. Its failure is kept for `settle`, never left unhandled. */
  private pending(request: FastifyRequest, work: () => Promise<unknown>): void {
    const started = work();
    started.catch(() => undefined);
    const holder = request as RequestWithPending;
    (holder[PENDING] ??= []).push(started);
  }
}

function sessionFrom(cookieValue: string, csrfSecret: string, state: SessionState): DashboardSession {
  return {
    id: digest(cookieValue).toString('hex'),
    csrfSecret,
    flashes: state.flashes,
    oneTime: state.oneTime,
    changes: [],
  };
}
