/** Every portal page lives under this path, on the public listener only. */
export const PORTAL_BASE = '/portal';

/** Builds a portal URL from segments, percent-encoding each one (ids come from the address bar). */
export function portalPath(...segments: string[]): string {
  return segments.length === 0
    ? PORTAL_BASE
    : `${PORTAL_BASE}/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
}
