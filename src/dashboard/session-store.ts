import { createHash, randomBytes } from 'node:crypto';

/** A dashboard session: only what the pages need between requests, never the admin token. */
export interface DashboardSession {
  /** Stable id for binding CSRF tokens; not the cookie value (that is only ever hashed). */
  readonly id: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** Messages for the next page shown (after a redirect), then gone. */
  flashes: Flash[];
  /** A key or secret shown once, by the path of the one page that shows it; that page's GET takes it. */
  readonly oneTime: Map<string, string>;
}

export interface Flash {
  kind: 'success' | 'error';
  text: string;
}

/** Values shown once that a session keeps untaken: the pages of a tab or two, never an unbounded heap. */
export const MAX_ONE_TIME_VALUES = 10;

/** Keeps a value for the page at `path`, replacing its older one; the oldest untaken value goes past the limit. */
export function keepOnce(session: DashboardSession, path: string, value: string): void {
  session.oneTime.delete(path);
  session.oneTime.set(path, value);
  for (const oldest of session.oneTime.keys()) {
    if (session.oneTime.size <= MAX_ONE_TIME_VALUES) break;
    session.oneTime.delete(oldest);
  }
}

/** The value kept for the page at `path`, forgotten as it is read. */
export function takeOnce(session: DashboardSession, path: string): string | null {
  const value = session.oneTime.get(path);
  session.oneTime.delete(path);
  return value ?? null;
}

export interface SessionStoreOptions {
  idleMs: number;
  /** Ends a session however busy it is, so a stolen cookie cannot be kept alive forever. */
  absoluteMs: number;
  now?: () => number;
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Sessions in this process's memory, keyed by the SHA-256 of the cookie
 * value. One instance serves the admin listener; a restart signs everyone
 * out, which for an operator's console is acceptable (and a shared store
 * can replace this class without touching the pages).
 */
export class SessionStore {
  private readonly sessions = new Map<string, DashboardSession>();
  private readonly now: () => number;

  constructor(private readonly options: SessionStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A new session and the cookie value that names it (shown once, to the browser). */
  create(): { token: string; session: DashboardSession } {
    this.sweep();
    const token = randomBytes(32).toString('base64url');
    const at = this.now();
    const session: DashboardSession = {
      id: randomBytes(16).toString('hex'),
      createdAt: at,
      lastSeenAt: at,
      flashes: [],
      oneTime: new Map(),
    };
    this.sessions.set(hashOf(token), session);
    return { token, session };
  }

  /** The live session a cookie names, its idle clock restarted; null when unknown or expired. */
  touch(token: string | undefined): DashboardSession | null {
    if (token === undefined || token.length === 0 || token.length > 200) return null;
    const key = hashOf(token);
    const session = this.sessions.get(key);
    if (session === undefined) return null;
    const at = this.now();
    if (this.expired(session, at)) {
      this.sessions.delete(key);
      return null;
    }
    session.lastSeenAt = at;
    return session;
  }

  destroy(token: string | undefined): void {
    if (token !== undefined) this.sessions.delete(hashOf(token));
  }

  get size(): number {
    return this.sessions.size;
  }

  private expired(session: DashboardSession, at: number): boolean {
    return at - session.lastSeenAt >= this.options.idleMs || at - session.createdAt >= this.options.absoluteMs;
  }

  /** Forgets expired sessions; run on every sign-in, so the map never outgrows the people using it. */
  private sweep(): void {
    const at = this.now();
    for (const [key, session] of this.sessions) {
      if (this.expired(session, at)) this.sessions.delete(key);
    }
  }
}
