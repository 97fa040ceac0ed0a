import { DASHBOARD_BASE } from './dashboard-paths';

export const SESSION_COOKIE = 'dashboard_session';
/** Holds the CSRF secret of a browser that has no session yet (the sign-in form); a session has its own. */
export const CSRF_COOKIE = 'dashboard_csrf';

/** Cookies the dashboard sets: its own path only, never readable by scripts, never sent cross-site, Secure over TLS. */
export const DASHBOARD_COOKIE_OPTIONS = {
  path: DASHBOARD_BASE,
  httpOnly: true,
  sameSite: 'strict',
  secure: 'auto',
} as const;
