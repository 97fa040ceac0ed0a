import { randomBytes } from 'node:crypto';

export interface Flash {
  kind: 'success' | 'error';
  text: string;
}

/** A flash message as a session keeps it: the id lets a request take exactly the ones it showed. */
export interface KeptFlash extends Flash {
  readonly id: string;
}

/** What a session carries from one request to the next besides its clock. */
export interface SessionState {
  /** Messages for the next page shown (after a redirect), then gone. */
  flashes: KeptFlash[];
  /**
   * A key or secret shown once, by the path of the one page that shows it; that page's GET takes it.
   * Stored sealed (see one-time-seal.ts): these strings are ciphertext, opened only with the cookie.
   * A request sees here only the value it has taken from the row (see DashboardSessionsService).
   */
  readonly oneTime: Map<string, string>;
}

/** A change a request made to its session's state, replayed on the stored state when the request ends. */
export type SessionChange = (state: SessionState) => void;

/** A dashboard session as one request sees it: only what the pages need, never the admin token. */
export interface DashboardSession extends SessionState {
  /** Stable id (the hex of the cookie value's hash); not the cookie value, which is never kept. */
  readonly id: string;
  /** The secret this session's CSRF tokens are made from; every instance checks them with it. */
  readonly csrfSecret: string;
  /** What this request changed, in order; written back when the request ends. */
  readonly changes: SessionChange[];
}

/** Values shown once that a session keeps untaken: the pages of a tab or two, never an unbounded heap. */
export const MAX_ONE_TIME_VALUES = 10;
/** Messages nobody has seen yet (forms posted from several tabs); the oldest go first. */
export const MAX_FLASHES = 10;

export function emptyState(): SessionState {
  return { flashes: [], oneTime: new Map() };
}

/** Keeps a value for the page at `path`, replacing its older one; the oldest untaken value goes past the limit. */
export function keepOnce(session: SessionState, path: string, value: string): void {
  session.oneTime.delete(path);
  session.oneTime.set(path, value);
  for (const oldest of session.oneTime.keys()) {
    if (session.oneTime.size <= MAX_ONE_TIME_VALUES) break;
    session.oneTime.delete(oldest);
  }
}

/**
 * The key of one of several values kept for the same page (portal links made
 * in two tabs before that page was shown): the page's path, `#` (never part
 * of a request's path) and a tag of the value's own.
 */
export function eachOnceKey(path: string, tag: string): string {
  return `${path}#${tag}`;
}

/** Whether the value kept under `key` waits for the page at `path`: its own, or one of several (eachOnceKey). */
export function waitsFor(key: string, path: string): boolean {
  return key === path || key.startsWith(`${path}#`);
}

/** The value kept for the page at `path`, forgotten as it is read. */
export function takeOnce(session: SessionState, path: string): string | null {
  const value = session.oneTime.get(path);
  session.oneTime.delete(path);
  return value ?? null;
}

/** A message with the id that lets the request that shows it take exactly it, on every copy of the state. */
export function newFlash(flash: Flash): KeptFlash {
  return { id: randomBytes(6).toString('hex'), kind: flash.kind, text: flash.text };
}

export function keepFlash(session: SessionState, flash: KeptFlash): void {
  session.flashes.push(flash);
  if (session.flashes.length > MAX_FLASHES) session.flashes.splice(0, session.flashes.length - MAX_FLASHES);
}

export function dropFlashes(session: SessionState, ids: ReadonlySet<string>): void {
  session.flashes = session.flashes.filter((flash) => !ids.has(flash.id));
}

/** Applies a change to the state this request sees and records it to be written back. */
export function change(session: DashboardSession, apply: SessionChange): void {
  apply(session);
  session.changes.push(apply);
}

/** The stored form (a jsonb column): plain arrays, the one-time values in the order they were kept. */
export interface StoredState {
  flashes: KeptFlash[];
  oneTime: Array<[string, string]>;
}

export function storedState(state: SessionState): StoredState {
  return { flashes: state.flashes, oneTime: [...state.oneTime] };
}

/** Reads the stored form back; anything malformed is left out rather than trusted. */
export function parseState(stored: unknown): SessionState {
  const state = emptyState();
  if (typeof stored !== 'object' || stored === null) return state;
  const { flashes, oneTime } = stored as Partial<Record<keyof StoredState, unknown>>;
  if (Array.isArray(flashes)) {
    for (const flash of flashes.slice(-MAX_FLASHES) as Array<Partial<KeptFlash> | null>) {
      if (typeof flash?.id !== 'string' || typeof flash.text !== 'string') continue;
      if (flash.kind !== 'success' && flash.kind !== 'error') continue;
      state.flashes.push({ id: flash.id, kind: flash.kind, text: flash.text });
    }
  }
  if (Array.isArray(oneTime)) {
    for (const entry of oneTime.slice(-MAX_ONE_TIME_VALUES) as unknown[]) {
      if (!Array.isArray(entry)) continue;
      const [path, value] = entry as unknown[];
      if (typeof path === 'string' && typeof value === 'string') keepOnce(state, path, value);
    }
  }
  return state;
}
