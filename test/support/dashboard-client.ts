import { roundTrip } from './http-client';

/**
 * A cookie-keeping client for the dashboard's HTML pages over real HTTP,
 * following nothing by itself, so tests see each 303.
 */
export interface DashboardResponse {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();

  constructor(private readonly adminUrl: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<DashboardResponse> {
    return this.send('GET', path, undefined, headers);
  }

  async head(path: string): Promise<DashboardResponse> {
    return this.send('HEAD', path, undefined, {});
  }

  /** Posts a form as a browser (or htmx, with `hx-request`) would: urlencoded, with the CSRF token when given. */
  async post(
    path: string,
    fields: Record<string, string | string[]>,
    csrf?: string | null,
    headers: Record<string, string> = {},
  ): Promise<DashboardResponse> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) {
      for (const one of Array.isArray(value) ? value : [value]) body.append(name, one);
    }
    if (csrf !== null && csrf !== undefined) body.set('_csrf', csrf);
    return this.send('POST', path, body.toString(), {
      ...headers,
      'content-type': 'application/x-www-form-urlencoded',
    });
  }

  /** Signs in through the form; returns the accounts page's CSRF token for the next posts. */
  async signIn(token: string): Promise<string> {
    const form = await this.get('/internal/dashboard/sign-in');
    const signedIn = await this.post('/internal/dashboard/sign-in', { token }, csrfOf(form.html));
    if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.html}`);
    return csrfOf((await this.get('/internal/dashboard/accounts')).html);
  }

  /** Keeps what `Set-Cookie` sets, as a browser does; an emptied or expired cookie is dropped. */
  protected keepCookies(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private async send(
    method: string,
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<DashboardResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await roundTrip(
      `${this.adminUrl}${path}`,
      method,
      {
        ...headers,
        ...(cookie === '' ? {} : { cookie }),
      },
      body,
    );
    this.keepCookies(response.headers);
    return {
      status: response.status,
      headers: response.headers,
      html: response.text,
      location: response.headers.get('location'),
    };
  }
}

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (match?.[1] === undefined) throw new Error('no CSRF token on the page');
  return match[1];
}
