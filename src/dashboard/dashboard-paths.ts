/** Every dashboard page lives under this path, on the admin listener only. */
export const DASHBOARD_BASE = '/internal/dashboard';

export const SIGN_IN_PATH = `${DASHBOARD_BASE}/sign-in`;

/** Builds a dashboard URL from segments, percent-encoding each one (ids come from users). */
export function dashboardPath(...segments: string[]): string {
  return `${DASHBOARD_BASE}/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
}

/** `path?name=value&…`, leaving out empty values. */
export function withQuery(path: string, query: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && value !== undefined && value !== '') search.set(name, value);
  }
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}
