import assert from 'node:assert/strict';
import { csrfOf, DashboardClient, type DashboardResponse } from './dashboard-client';
import { internalApi, roundTrip } from './http-client';
import type { TestService } from './test-service';

/** The token of a portal link: what follows `#token=` (the fragment, never sent by a browser). */
export function tokenOf(url: string): string {
  const token = /#token=([A-Za-z0-9_-]+)$/.exec(url)?.[1];
  assert.ok(token !== undefined, `no token in ${url}`);
  return token;
}

/** Mints a link through the internal API; its token and the answer. */
export async function mintPortalLink(
  service: TestService,
  accountId: string,
  options: { readOnly?: boolean; ttlSeconds?: number } = {},
): Promise<{ token: string; url: string; expiresAt: string; readOnly: boolean }> {
  const minted = await internalApi(service)('POST', '/internal/portal-links', { body: { accountId, ...options } });
  assert.equal(minted.status, 201, minted.text);
  const data = minted.body.data as { url: string; expiresAt: string; readOnly: boolean };
  return { ...data, token: tokenOf(data.url) };
}

/**
 * A cookie-keeping client for the portal's pages over real HTTP (the
 * dashboard's client pointed at the public listener), which opens a link as
 * the portal's script does: POST the fragment's token as JSON.
 */
export class PortalClient extends DashboardClient {
  constructor(readonly publicUrl: string) {
    super(publicUrl);
  }

  /**
   * Posts a link's token as the portal's page does, with the cookies this browser holds and the page's `Origin`
   * (a browser names it on every POST; `origin: null` leaves it out, as no browser does).
   */
  async exchange(
    token: string,
    options: { origin?: string | null } = {},
  ): Promise<{ status: number; location: string; setCookie: string[] }> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const origin = options.origin === undefined ? new URL(this.publicUrl).origin : options.origin;
    const response = await roundTrip(
      `${this.publicUrl}/portal/session`,
      'POST',
      {
        'content-type': 'application/json',
        ...(origin === null ? {} : { origin }),
        ...(cookie === '' ? {} : { cookie }),
      },
      JSON.stringify({ token }),
    );
    this.keepCookies(response.headers);
    return {
      status: response.status,
      location: response.headers.get('location') ?? '',
      setCookie: response.headers.getSetCookie(),
    };
  }

  /** Opens a link; the subscriptions page's CSRF token for the next posts. */
  async open(token: string): Promise<string> {
    const opened = await this.exchange(token);
    assert.equal(opened.status, 200, `the link did not open: ${opened.location}`);
    return csrfOf((await this.get('/portal/subscriptions')).html);
  }

  /** Posts a form of a page: the page's CSRF token is read from it first. */
  async postFrom(
    page: DashboardResponse,
    path: string,
    fields: Record<string, string> = {},
  ): Promise<DashboardResponse> {
    return this.post(path, fields, csrfOf(page.html));
  }
}
