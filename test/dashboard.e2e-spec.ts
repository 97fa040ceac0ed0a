import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import {
  assertRefreshAnnounced,
  assertRefreshLinkShown,
  assertUnreadableSinceShown,
  assertUntilBeforeSinceShown,
} from './support/webhook-page-assertions';
import { DashboardClient, csrfOf } from './support/dashboard-client';
import fastifyCookie from '@fastify/cookie';
import Fastify from 'fastify';
import { DASHBOARD_COOKIE_OPTIONS } from '../src/dashboard/dashboard-plugins';
import { fixtures } from './support/fixtures';
import { PortalClient } from './support/portal-client';
import { receiverCertificate } from './support/https-receiver';
import { assertErrorBody } from './support/error-body';
import { internalApi, publicApi, roundTrip } from './support/http-client';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';
import { insertFailedHistoryDeliveries } from './support/webhook-rows';

/** The dashboard's HTTP rules (sessions, CSRF, listeners); the browser walk-through is dashboard-browser.e2e-spec. */
describe('dashboard over HTTP', () => {
  let service: TestService;

  const app = withApp({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });
  before(async () => {
    ({ service } = app);
  });

  it('redirects a page request without a session to the sign-in form with 303', async () => {
    const client = new DashboardClient(service.adminUrl);
    for (const path of ['/internal/dashboard/accounts', '/internal/dashboard/organisers/org_x/events']) {
      const page = await client.get(path);
      assert.equal(page.status, 303, path);
      assert.equal(new URL(page.location ?? '', service.adminUrl).pathname, '/internal/dashboard/sign-in');
    }
    const post = await client.post('/internal/dashboard/organisers', { name: 'x' }, null);
    assert.equal(post.status, 303, 'a form post without a session also goes to the sign-in form');
  });

  it('redirects the dashboard’s address with a trailing slash as it redirects the address without one', async () => {
    const client = new DashboardClient(service.adminUrl);
    for (const path of ['/internal/dashboard', '/internal/dashboard/']) {
      const page = await client.get(path);
      assert.equal(page.status, 303, path);
      assert.match(page.location ?? '', /^\/internal\/dashboard(?:\/sign-in)?$/, path);
    }
    const followed = await client.get((await client.get('/internal/dashboard/')).location ?? '');
    assert.equal(followed.location, '/internal/dashboard/sign-in');
    await client.signIn(service.adminToken);
    const signedIn = await client.get('/internal/dashboard/');
    assert.equal((await client.get(signedIn.location ?? '')).location, '/internal/dashboard/accounts');
    assert.equal((await client.get('/internal/dashboard/nope/')).status, 404, 'only the dashboard’s own address');
    const elsewhere = await fetch(`${service.publicUrl}/internal/dashboard/`, { redirect: 'manual' });
    assert.equal(elsewhere.status, 404, 'and on the admin listener only');
  });

  it('does not take the admin bearer token instead of a session on dashboard pages', async () => {
    const client = new DashboardClient(service.adminUrl);
    const page = await client.get('/internal/dashboard/accounts', { authorization: `Bearer ${service.adminToken}` });
    assert.equal(page.status, 303);
  });

  it('refuses a wrong admin token at sign-in with 401 and sets no session', async () => {
    const client = new DashboardClient(service.adminUrl);
    const form = await client.get('/internal/dashboard/sign-in');
    assert.equal(form.status, 200);
    const refused = await client.post(
      '/internal/dashboard/sign-in',
      { token: `${service.adminToken}x` },
      csrfOf(form.html),
    );
    assert.equal(refused.status, 401);
    assert.match(refused.html, /That is not the admin token/);
    assert.equal(client.cookies.has('dashboard_session'), false);
    assert.equal((await client.get('/internal/dashboard/accounts')).status, 303);
  });

  it('signs in with the admin token into an HttpOnly, SameSite=Strict cookie scoped to the dashboard (not Secure over plain HTTP)', async () => {
    const client = new DashboardClient(service.adminUrl);
    const form = await client.get('/internal/dashboard/sign-in');
    const response = await fetch(`${service.adminUrl}/internal/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...client.cookies].map(([n, v]) => `${n}=${v}`).join('; '),
      },
      body: new URLSearchParams({ token: service.adminToken, _csrf: csrfOf(form.html) }).toString(),
    });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/internal/dashboard/accounts');
    const session = response.headers.getSetCookie().find((line) => line.startsWith('dashboard_session='));
    assert.ok(session, 'a session cookie is set');
    assert.match(session, /; HttpOnly/i);
    assert.match(session, /; SameSite=Strict/i);
    assert.match(session, /; Path=\/internal\/dashboard/i);
    assert.doesNotMatch(session, /; Secure/i);
    assert.doesNotMatch(session, new RegExp(service.adminToken), 'the cookie is not the admin token');
  });

  it('refuses a form post whose CSRF token is missing or forged, even with a session', async () => {
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const missing = await client.post('/internal/dashboard/organisers', { name: 'No token' }, null);
    assert.equal(missing.status, 403);
    assert.match(missing.html, /form has expired or did not come from this dashboard/);
    const forged = await client.post('/internal/dashboard/organisers', { name: 'Forged' }, `${csrf.slice(0, -2)}xx`);
    assert.equal(forged.status, 403);
    const other = new DashboardClient(service.adminUrl);
    const otherCsrf = await other.signIn(service.adminToken);
    const crossSession = await client.post('/internal/dashboard/organisers', { name: 'Other session' }, otherCsrf);
    assert.equal(crossSession.status, 403, "another session's token is refused");
    const accepted = await client.post('/internal/dashboard/organisers', { name: 'With token' }, csrf);
    assert.equal(accepted.status, 303);
    assert.match(accepted.location ?? '', /^\/internal\/dashboard\/organisers\/org_/);
  });

  it('signs out: the old session cookie opens no page afterwards', async () => {
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const stolen = client.cookies.get('dashboard_session');
    const out = await client.post('/internal/dashboard/sign-out', {}, csrf);
    assert.equal(out.status, 303);
    assert.equal(out.location, '/internal/dashboard/sign-in');
    assert.equal(client.cookies.has('dashboard_session'), false, 'the cookie is cleared');
    const replay = new DashboardClient(service.adminUrl);
    replay.cookies.set('dashboard_session', stolen ?? '');
    assert.equal((await replay.get('/internal/dashboard/accounts')).status, 303, 'the server forgot the session');
  });

  it('still requires the bearer token on every other internal path, whatever session cookie is sent', async () => {
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const cookie = `dashboard_session=${client.cookies.get('dashboard_session')}`;
    const admin = internalApi(service);
    const refused = await admin('POST', '/internal/organisers', {
      token: null,
      body: { name: 'x' },
      headers: { cookie },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'unauthorized');
  });

  it('serves the dashboard on the admin listener only', async () => {
    const response = await fetch(`${service.publicUrl}/internal/dashboard/sign-in`, { redirect: 'manual' });
    assert.equal(response.status, 404);
  });

  it('accepts urlencoded bodies on dashboard paths only: the JSON API still answers 415', async () => {
    const admin = internalApi(service);
    const refused = await admin('POST', '/internal/organisers', {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(refused.status, 415);
  });

  it('sends pages uncached, with a same-origin-only content security policy and no framing', async () => {
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const page = await client.get('/internal/dashboard/accounts');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'.*frame-ancestors 'none'/);
  });

  it('shows the service refusal beside the field: a venue key cannot get events:write', async () => {
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const venue = await client.post(
      '/internal/dashboard/venues',
      { name: 'Hall', city: 'Berlin', timeZone: 'Europe/Berlin' },
      csrf,
    );
    assert.equal(venue.status, 303);
    const venuePath = venue.location ?? '';
    const page = await client.get(venuePath);
    const minted = await client.post(
      `${venuePath}/keys`,
      { scopes: ['events:read', 'events:write'], actorRole: 'owner' },
      csrfOf(page.html),
    );
    assert.equal(minted.status, 400);
    assert.match(minted.html, /id="key-scopes-error" class="field-error">Venue keys cannot hold events:write/);
  });

  it('answers a bad time zone on a new venue with the message beside the field and creates nothing', async () => {
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const refused = await client.post(
      '/internal/dashboard/venues',
      { name: 'Nowhere hall', timeZone: 'Mars/Olympus' },
      csrf,
    );
    assert.equal(refused.status, 400);
    assert.match(refused.html, /id="venue-location-time-zone-error"/);
    const search = await client.get('/internal/dashboard/accounts?q=Nowhere');
    assert.match(search.html, /No venues match/);
  });

  it('refuses unknown query parameters on pages with an HTML 400, as the API does', async () => {
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const page = await client.get('/internal/dashboard/accounts?nope=1');
    assert.equal(page.status, 400);
    assert.match(page.html, /Unsupported query parameter/);
  });

  it('refuses a NUL in any form field or query value with an HTML 400, never a failure, and stores nothing', async () => {
    const organiser = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const refusals: Array<[string, Promise<{ status: number; html: string }>]> = [
      ['an organiser name', client.post('/internal/dashboard/organisers', { name: 'a\u0000b' }, csrf)],
      ['a venue’s city', client.post('/internal/dashboard/venues', { name: 'Nulhall', city: 'a\u0000b' }, csrf)],
      [
        'an event title',
        client.post(
          `/internal/dashboard/organisers/${organiser.id}/events`,
          { title: 'a\u0000b', startTime: '2031-01-01T20:00:00Z' },
          csrf,
        ),
      ],
      ['a search', client.get('/internal/dashboard/accounts?q=a%00b')],
      ['a page of organisers', client.get('/internal/dashboard/accounts?organisers_cursor=a%00b')],
      ['a page of venues', client.get('/internal/dashboard/accounts?venues_cursor=a%00b')],
      ['a page of events', client.get(`/internal/dashboard/organisers/${organiser.id}/events?cursor=a%00b`)],
      ['a page of orders', client.get(`/internal/dashboard/organisers/${organiser.id}/orders?cursor=a%00b`)],
    ];
    const answered: string[] = [];
    for (const [what, answer] of refusals) {
      const page = await answer;
      answered.push(`${what}: ${page.status} ${/<html/.test(page.html) ? 'page' : 'no page'}`);
    }
    assert.deepEqual(
      answered,
      refusals.map(([what]) => `${what}: 400 page`),
    );
    const refused = await client.post('/internal/dashboard/organisers', { name: 'a\u0000b' }, csrf);
    assert.match(refused.html, /The form field name must not contain the NUL character/);
    const search = await client.get('/internal/dashboard/accounts?q=Nulhall');
    assert.match(search.html, /No venues match/, 'nothing was created');
  });

  /** Posts a form that changes something and returns the page its 303 leads to, with the message it shows. */
  async function postedPage(
    client: DashboardClient,
    csrf: string,
    path: string,
    fields: Record<string, string>,
  ): Promise<string> {
    const posted = await client.post(path, fields, csrf);
    assert.equal(posted.status, 303, `${path}: ${posted.html.slice(0, 300)}`);
    return (await client.get(posted.location ?? '')).html;
  }

  /** Posts a form that is refused: the page it was posted from comes back with 400, changing nothing. */
  async function refusedPage(
    client: DashboardClient,
    csrf: string,
    path: string,
    fields: Record<string, string>,
  ): Promise<{ status: number; html: string }> {
    const refused = await client.post(path, fields, csrf);
    assert.equal(refused.status, 400, `${path}: ${refused.status} ${refused.location ?? ''}`);
    return refused;
  }

  /** A subscription made through the public API, as an integrator would (nothing is delivered in these tests). */
  async function webhook(): Promise<{ organiserId: string; webhookId: string }> {
    const organiser = await fixtures(service).organiser({ scopes: ['events:read', 'webhooks:read', 'webhooks:write'] });
    const created = await publicApi(service)('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: 'https://127.0.0.1:9/hooks', events: ['event.published'] },
    });
    assert.equal(created.status, 201, created.text);
    return { organiserId: organiser.id, webhookId: created.body.data.id };
  }

  it('lists an account’s webhooks with their description, escaped, so two to one host can be told apart', async () => {
    const organiser = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    for (const description of ['Ticketing <sync>', 'Accounting']) {
      const created = await publicApi(service)('POST', '/v1/webhooks', {
        key: organiser.key,
        body: { url: 'https://127.0.0.1:9/hooks', events: ['event.published'], description },
      });
      assert.equal(created.status, 201, created.text);
    }
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const page = await client.get(`/internal/dashboard/organisers/${organiser.id}`);
    assert.equal(page.status, 200);
    assert.match(page.html, /<td>Ticketing &lt;sync&gt;<\/td>/);
    assert.match(page.html, /<td>Accounting<\/td>/);
  });

  it('titles each webhook page with its description, or its id without one, so two to one host can be told apart', async () => {
    const organiser = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const ids: string[] = [];
    for (const description of ['Ticketing <sync>', undefined]) {
      const created = await publicApi(service)('POST', '/v1/webhooks', {
        key: organiser.key,
        body: { url: 'https://127.0.0.1:9/hooks', events: ['event.published'], description },
      });
      assert.equal(created.status, 201, created.text);
      ids.push(created.body.data.id as string);
    }
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const described = await client.get(`/internal/dashboard/webhooks/${ids[0]}`);
    assert.match(described.html, /<title>Webhook to 127\.0\.0\.1:9: Ticketing &lt;sync&gt; · /);
    assert.match(described.html, /<h1>Webhook to 127\.0\.0\.1:9: Ticketing &lt;sync&gt;<\/h1>/);
    const bare = await client.get(`/internal/dashboard/webhooks/${ids[1]}`);
    assert.match(bare.html, new RegExp(`<h1>Webhook to 127\\.0\\.0\\.1:9 \\(${ids[1]}\\)</h1>`));
  });

  it('offers no recovery window on a disabled subscription (it would be refused), only re-enabling with recovery', async () => {
    const organiser = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const created = await publicApi(service)('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: 'https://127.0.0.1:9/hooks', events: ['event.published'], enabled: false },
    });
    assert.equal(created.status, 201, created.text);
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const page = await client.get(`/internal/dashboard/webhooks/${created.body.data.id}`);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.html, /action="[^"]*\/recover"/);
    assert.match(page.html, /action="[^"]*\/enable"/);
    assert.match(page.html, /can be recovered once the subscription is enabled again/);
  });

  it('refuses a recovery window without a readable start, with the reason on the page', async () => {
    const { webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const refused = await client.post(`${path}/recover`, { since: 'yesterday-ish' }, csrf);
    assert.equal(refused.status, 400);
    assert.match(refused.html, /class="field-error">Since must be an instant/);
    const backwards = await client.post(
      `${path}/recover`,
      { since: '2026-02-01T00:00:00Z', until: '2026-01-01' },
      csrf,
    );
    assert.equal(backwards.status, 400);
    assert.match(backwards.html, /Until must not be before Since/);
    const fine = await client.post(`${path}/recover`, { since: '2026-01-01T00:00:00Z' }, csrf);
    assert.equal(fine.status, 303);
    assert.match((await client.get(path)).html, /0 deliveries queued again/);
  });

  it('reads times written as the pages show them in a recovery window and a new event’s start', async () => {
    const { organiserId, webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const recovered = await postedPage(client, csrf, `${path}/recover`, {
      since: '2026-12-07 00:24:46 UTC',
      until: '2026-12-08 00:00 UTC',
    });
    assert.match(recovered, /0 deliveries queued again/);
    const created = await postedPage(client, csrf, `/internal/dashboard/organisers/${organiserId}/events`, {
      title: 'Shown time',
      startTime: '2031-03-01 19:00:00 UTC',
      visibility: 'draft',
    });
    assert.match(created, /Event Shown time created/);
    const { rows } = await app.db.query<{ start_time: Date }>('SELECT start_time FROM event WHERE organizer_id = $1', [
      organiserId,
    ]);
    assert.equal(rows[0]?.start_time.toISOString(), '2031-03-01T19:00:00.000Z');
  });

  it('pages a webhook’s delivery log: past the newest 100, an Older deliveries link leads on until every delivery has been shown once', async () => {
    const { webhookId } = await webhook();
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_dash_', 105);
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const seen: string[] = [];
    let path: string | undefined = `/internal/dashboard/webhooks/${webhookId}`;
    for (let pages = 0; path !== undefined && pages < 5; pages += 1) {
      const page = await client.get(path);
      assert.equal(page.status, 200);
      seen.push(...[...page.html.matchAll(/<code>(dlv_dash_\d+)<\/code>/g)].map((match) => match[1] ?? ''));
      path = /id="older-deliveries" href="([^"#]+)/.exec(page.html)?.[1]?.replaceAll('&amp;', '&');
    }
    assert.equal(seen.length, 105);
    assert.equal(new Set(seen).size, 105, 'no delivery is shown twice');
    assert.deepEqual([seen[0], seen.at(-1)], ['dlv_dash_0105', 'dlv_dash_0001']);
  });

  it('returns an action taken on an Older deliveries page to that page, keeping only a cursor the log accepts', async () => {
    const { webhookId } = await webhook();
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_back_', 105);
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const newest = await client.get(path);
    const olderPath = /id="older-deliveries" href="([^"#]+)/.exec(newest.html)?.[1]?.replaceAll('&amp;', '&') ?? '';
    assert.match(olderPath, /\?before=dlv_back_0006$/);
    const older = await client.get(olderPath);
    assert.match(older.html, /name="before" value="dlv_back_0006"/);
    const resent = await client.post(`${path}/deliveries/dlv_back_0002/resend`, { before: 'dlv_back_0006' }, csrf);
    assert.equal(resent.status, 303);
    assert.equal(resent.location, olderPath);
    assert.match((await client.get(resent.location ?? '')).html, /Delivery dlv_back_0002 is being sent again/);
    // A window in the future recovers nothing: the fixture's deliveries all name one order, which the queue holds once.
    const forged = await client.post(`${path}/recover`, { since: '2099-01-01T00:00:00Z', before: '//elsewhere' }, csrf);
    assert.equal(forged.location, path, `${forged.status} ${forged.html.slice(-600)}`);
  });

  it('leads from an Older deliveries page back to the newest with a plain link, not a swap in place, so the address and the forms name the page shown', async () => {
    const { webhookId } = await webhook();
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_newest_', 105);
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const older = await client.get(`${path}?before=dlv_newest_0006`);
    assert.match(older.html, /name="before" value="dlv_newest_0006"/, 'the older page’s forms name it');
    const back = /<a id="newest-deliveries"[^>]*>[^<]*<\/a>/.exec(older.html)?.[0];
    assert.equal(back, `<a id="newest-deliveries" href="${path}#delivery-log">Back to the newest</a>`);
    assert.doesNotMatch(older.html, /id="refresh-log"/);
  });

  it('answers an Older deliveries cursor no delivery id can have (a NUL) as an out-of-date link, never as a failure', async () => {
    const { webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const page = await client.get(`/internal/dashboard/webhooks/${webhookId}?before=%00`);
    assert.equal(page.status, 400);
    assert.match(page.html, /link is out of date/);
  });

  it('refuses a grace period outside 0 to 604800 seconds beside the field, and keeps the secret', async () => {
    const { webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const refused = await client.post(
      `/internal/dashboard/webhooks/${webhookId}/rotate-secret`,
      { graceSeconds: '604801' },
      csrf,
    );
    assert.equal(refused.status, 400);
    assert.match(
      refused.html,
      /id="grace-seconds-error" class="field-error">Seconds the current secret keeps signing must be a whole number/,
    );
    const detail = await internalApi(service)('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(detail.body.data.secretRotation, null);
  });

  it('says what a form refuses in the words of its labels: a link’s seconds out of range, an out-of-date Older deliveries link', async () => {
    const { organiserId, webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const said = (
      await refusedPage(client, csrf, `/internal/dashboard/organisers/${organiserId}/portal-link`, {
        ttlSeconds: '5',
      })
    ).html;
    assert.match(said, /Seconds the link may be opened in must be a whole number from 60 to 3600/);
    assert.doesNotMatch(said, /ttlSeconds must/);
    const stale = await client.get(`/internal/dashboard/webhooks/${webhookId}?before=dlv_retained_no_more`);
    assert.equal(stale.status, 400);
    assert.match(stale.html, /This &quot;Older deliveries&quot; link is out of date/);
    assert.doesNotMatch(stale.html, /cursor/);
  });

  it('says until when a new portal link opens in the pages’ time format, as every other time on them', async () => {
    const { organiserId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const page = await postedPage(client, csrf, `/internal/dashboard/organisers/${organiserId}/portal-link`, {
      ttlSeconds: '600',
    });
    assert.match(page, /Portal link made: it opens once, until \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC, and is shown/);
    assert.doesNotMatch(page, /until \d{4}-\d{2}-\d{2}T/);
  });

  it('shows every portal link made before the account page was shown, each labelled with what it allows: a second link neither hides the first nor appears under its message', async () => {
    const { organiserId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/organisers/${organiserId}/portal-link`;
    assert.equal((await client.post(path, { ttlSeconds: '120', readOnly: 'true' }, csrf)).status, 303);
    assert.equal((await client.post(path, { ttlSeconds: '300' }, csrf)).status, 303);
    const page = (await client.get(`/internal/dashboard/organisers/${organiserId}`)).html;
    const shown = [
      ...page.matchAll(
        /<label for="(new-portal-link[^"]*)">Portal link, ([a-z ]+):[^<]*<\/label>\s*<input id="\1"[^>]*value="([^"]+)"/g,
      ),
    ];
    assert.equal(shown.length, 2, page);
    for (const [, , label, url] of shown) {
      const token = decodeURIComponent(new URL(url!.replaceAll('&amp;', '&')).hash.replace(/^#token=/, ''));
      const { rows } = await app.db.query<{ read_only: boolean }>(
        'SELECT read_only FROM portal_link WHERE token_hash = $1',
        [createHash('sha256').update(token).digest('hex')],
      );
      assert.equal(rows[0]?.read_only, label === 'read only', `${label}: ${url}`);
    }
    assert.deepEqual(shown.map(([, , label]) => label).sort(), ['full access', 'read only']);
    assert.doesNotMatch(
      (await client.get(`/internal/dashboard/organisers/${organiserId}`)).html,
      /new-portal-link/,
      'shown once',
    );
  });

  it('rotates with no grace period only with its box ticked: the old secret must not stop signing by a slip', async () => {
    const { webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}/rotate-secret`;
    const before = await internalApi(service)('GET', `/internal/webhooks/${webhookId}`);
    const refused = await client.post(path, { graceSeconds: '0' }, csrf);
    assert.equal(refused.status, 400);
    assert.match(
      refused.html,
      /id="confirm-no-grace-error" class="field-error">With 0 seconds the current secret stops signing at once/,
    );
    const kept = await internalApi(service)('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(kept.body.data.secret, before.body.data.secret, 'nothing rotated');
    const confirmed = await client.post(path, { graceSeconds: '0', confirmNoGrace: 'true' }, csrf);
    assert.equal(confirmed.status, 303);
    const rotated = await internalApi(service)('GET', `/internal/webhooks/${webhookId}`);
    assert.notEqual(rotated.body.data.secret, before.body.data.secret);
    assert.equal(rotated.body.data.secretRotation, null, 'no grace: the old secret signs no more');
  });

  it('rotates while the previous secret is still in its grace period only with its box ticked: that secret must not stop signing by a slip', async () => {
    const { webhookId } = await webhook();
    const admin = internalApi(service);
    const first = await admin('POST', `/internal/webhooks/${webhookId}/rotate-secret`, {
      body: { graceSeconds: 3600 },
    });
    assert.equal(first.status, 200, first.text);
    const inGrace = await admin('GET', `/internal/webhooks/${webhookId}`);
    assert.notEqual(inGrace.body.data.secretRotation, null);
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    assert.match(
      (await client.get(path)).html,
      /I mean it: the previous secret, still signing until \d{4}-\d{2}-\d{2} /,
    );
    const refused = await client.post(`${path}/rotate-secret`, { graceSeconds: '60' }, csrf);
    assert.equal(refused.status, 400);
    assert.match(
      refused.html,
      /id="confirm-no-grace-error" class="field-error">The secret replaced by the last rotation still signs until \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC: rotating again stops it at once/,
    );
    assert.match(
      refused.html,
      /id="confirm-no-grace"[^>]*aria-invalid="true" aria-describedby="confirm-no-grace-error"/,
    );
    const kept = await admin('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(kept.body.data.secret, inGrace.body.data.secret, 'nothing rotated');
    assert.deepEqual(
      kept.body.data.secretRotation,
      inGrace.body.data.secretRotation,
      'the previous secret still signs',
    );
    const confirmed = await client.post(`${path}/rotate-secret`, { graceSeconds: '60', confirmNoGrace: 'true' }, csrf);
    assert.equal(confirmed.status, 303);
    const rotated = await admin('GET', `/internal/webhooks/${webhookId}`);
    assert.notEqual(rotated.body.data.secret, inGrace.body.data.secret);
  });

  it('refuses the second of two rotation forms posted at once without the box: the grace the first began keeps the original secret signing', async () => {
    const { webhookId } = await webhook();
    const admin = internalApi(service);
    const original = await admin('GET', `/internal/webhooks/${webhookId}`);
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}/rotate-secret`;
    // Both read the webhook with no grace running, as two tabs of one page would.
    const posted = await Promise.all([
      client.post(path, { graceSeconds: '86400' }, csrf),
      client.post(path, { graceSeconds: '86400' }, csrf),
    ]);
    assert.deepEqual(
      posted.map((answer) => answer.status).sort(),
      [303, 400],
      posted.map((answer) => answer.html.slice(0, 200)).join('\n'),
    );
    assert.match(
      posted.find((answer) => answer.status === 400)?.html ?? '',
      /id="confirm-no-grace-error" class="field-error">The secret replaced by the last rotation still signs until/,
    );
    const rotatedOnce = await admin('GET', `/internal/webhooks/${webhookId}`);
    assert.notEqual(rotatedOnce.body.data.secret, original.body.data.secret);
    assert.notEqual(rotatedOnce.body.data.secretRotation, null, 'the original secret still signs through its grace');
  });

  it('focuses the first field a refused form marks invalid, described by its refusal, and nothing else', async () => {
    const { webhookId } = await webhook();
    const venue = await fixtures(service).venue();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const venuePath = `/internal/dashboard/venues/${venue.id}`;
    const refusals: Array<[string, Promise<{ status: number; html: string }>, RegExp]> = [
      [
        'a blank organiser name',
        client.post('/internal/dashboard/organisers', { name: ' ' }, csrf),
        /<input id="organiser-name"[^>]*aria-invalid="true" aria-describedby="organiser-name-error" autofocus>/,
      ],
      [
        'scopes a venue key may not hold',
        client.post(`${venuePath}/keys`, { scopes: ['events:read', 'events:write'], actorRole: 'owner' }, csrf),
        /<input id="key-scope-0"[^>]* autofocus>/,
      ],
      [
        'a grace of 0 seconds without its box',
        client.post(`/internal/dashboard/webhooks/${webhookId}/rotate-secret`, { graceSeconds: '0' }, csrf),
        /<input id="confirm-no-grace"[^>]*aria-invalid="true" aria-describedby="confirm-no-grace-error" autofocus>/,
      ],
      [
        'an unknown time zone',
        client.post(`${venuePath}/locations`, { displayName: 'Loft', timeZone: 'Mars/Olympus' }, csrf),
        /<input id="location-time-zone"[^>]*aria-invalid="true" aria-describedby="location-time-zone-error" autofocus>/,
      ],
    ];
    for (const [what, answer, focused] of refusals) {
      const page = await answer;
      assert.equal(page.status, 400, what);
      assert.match(page.html, focused, what);
      assert.equal(page.html.match(/\sautofocus\b/g)?.length, 1, `${what}: one element takes the focus`);
    }
    const rotate = await client.post(
      `/internal/dashboard/webhooks/${webhookId}/rotate-secret`,
      { graceSeconds: '0' },
      csrf,
    );
    assert.doesNotMatch(rotate.html, /id="grace-seconds"[^>]*aria-invalid/, 'the seconds typed are not what is wrong');
  });

  /** Keys listed on an account page (one revoke link per live key). */
  const liveKeysOn = (html: string): number => html.match(/\/keys\/key_[^/"]+\/revoke"/g)?.length ?? 0;
  const KEY_PATTERN = /svc_live_[0-9a-f]{48}/;

  it('answers a key mint with 303 to a page that shows the new key on its first GET only, and minting nothing more', async () => {
    const venue = await fixtures(service).venue();
    const organiser = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    for (const accountPath of [
      `/internal/dashboard/organisers/${organiser.id}`,
      `/internal/dashboard/venues/${venue.id}`,
    ]) {
      const page = await client.get(accountPath);
      const before = liveKeysOn(page.html);
      const minted = await client.post(`${accountPath}/keys`, { name: 'Till', actorRole: 'owner' }, csrfOf(page.html));
      assert.equal(minted.status, 303, accountPath);
      const location = minted.location ?? '';
      assert.match(location, new RegExp(`^${accountPath}/keys/key_[^/?]+/created$`), 'a GET page, no secret in it');
      assert.doesNotMatch(minted.html, KEY_PATTERN, 'the redirect itself carries no key');

      const first = await client.get(location);
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('cache-control'), 'no-store');
      const key = KEY_PATTERN.exec(first.html)?.[0] ?? '';
      assert.equal((await publicApi(service)('GET', '/v1/me', { key })).status, 200, 'the key shown works');

      const reload = await client.get(location);
      assert.equal(reload.status, 200);
      assert.equal(reload.headers.get('cache-control'), 'no-store');
      assert.doesNotMatch(reload.html, KEY_PATTERN, 'a reload does not show the key again');
      assert.match(reload.html, /This key was shown once, right after it was minted, and is not shown again/);
      assert.equal(liveKeysOn((await client.get(accountPath)).html), before + 1, 'one key minted, whatever the GETs');
    }
  });

  it('shows a new key only in the session that minted it', async () => {
    const organiser = await fixtures(service).organiser();
    const accountPath = `/internal/dashboard/organisers/${organiser.id}`;
    const minter = new DashboardClient(service.adminUrl);
    const csrf = await minter.signIn(service.adminToken);
    const minted = await minter.post(`${accountPath}/keys`, { actorRole: 'owner' }, csrf);
    assert.equal(minted.status, 303);
    const other = new DashboardClient(service.adminUrl);
    await other.signIn(service.adminToken);
    const elsewhere = await other.get(minted.location ?? '');
    assert.equal(elsewhere.status, 200);
    assert.doesNotMatch(elsewhere.html, KEY_PATTERN);
    assert.match((await minter.get(minted.location ?? '')).html, KEY_PATTERN);
  });

  it('leaves a key shown once to the GET when the page is first asked for with HEAD', async () => {
    const organiser = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const minted = await client.post(
      `/internal/dashboard/organisers/${organiser.id}/keys`,
      { actorRole: 'owner' },
      csrf,
    );
    const location = minted.location ?? '';
    const head = await client.head(location);
    assert.equal(head.status, 200);
    assert.match((await client.get(location)).html, KEY_PATTERN);
  });

  it('answers a mint posted by htmx with HX-Redirect to the page that shows the key once', async () => {
    const organiser = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const accountPath = `/internal/dashboard/organisers/${organiser.id}`;
    const minted = await client.post(`${accountPath}/keys`, { actorRole: 'owner' }, csrf, { 'hx-request': 'true' });
    assert.equal(minted.status, 200);
    const location = minted.headers.get('hx-redirect') ?? '';
    assert.match(location, new RegExp(`^${accountPath}/keys/key_[^/?]+/created$`));
    assert.doesNotMatch(minted.html, KEY_PATTERN);
    assert.match((await client.get(location)).html, KEY_PATTERN);
    assert.doesNotMatch((await client.get(location)).html, KEY_PATTERN);
  });

  it('answers a secret rotation with 303 to a page that shows the new secret on its first GET only, and rotating nothing more', async () => {
    const { webhookId } = await webhook();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const rotated = await client.post(`${path}/rotate-secret`, { graceSeconds: '60' }, csrf);
    assert.equal(rotated.status, 303);
    assert.equal(rotated.location, `${path}/new-secret`);

    const first = await client.get(`${path}/new-secret`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const shown = /whsec_[0-9a-f]{64}/.exec(first.html)?.[0];
    const current = await internalApi(service)('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(shown, current.body.data.secret, 'the page shows the secret that now signs');

    const reload = await client.get(`${path}/new-secret`);
    assert.equal(reload.status, 200);
    assert.equal(reload.headers.get('cache-control'), 'no-store');
    assert.doesNotMatch(reload.html, /whsec_/, 'a reload does not show the secret again');
    assert.match(reload.html, /The new secret was shown once, right after the rotation, and is not shown again/);
    const after = await internalApi(service)('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(after.body.data.secret, shown, 'a reload rotates nothing');
    assert.deepEqual(after.body.data.secretRotation, current.body.data.secretRotation);
  });

  it('answers every form that changes something with 303 to a GET page, whose message a reload does not repeat', async () => {
    const { organiserId, webhookId } = await webhook();
    const admin = internalApi(service);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: organiserId, title: { EN: 'Redirected' }, startTime: '2031-01-01T20:00:00Z' },
    });
    assert.equal(event.status, 201, event.text);
    const eventId: string = event.body.data.id;
    const order = await admin('POST', '/internal/orders', {
      body: { eventId, lineItems: [{ quantity: 1 }], totalAmountMinor: 100 },
    });
    const orderId: string = order.body.data.id;
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const organiserPath = `/internal/dashboard/organisers/${organiserId}`;
    const webhookPath = `/internal/dashboard/webhooks/${webhookId}`;

    /** Posts a form, follows its 303 with GET twice: the first page reports the change, the reload does not. */
    const changes = async (path: string, fields: Record<string, string>, report: RegExp): Promise<string> => {
      const posted = await client.post(path, fields, csrf);
      assert.equal(posted.status, 303, `${path}: ${posted.html.slice(0, 300)}`);
      const location = posted.location ?? '';
      assert.match(location, /^\/internal\/dashboard\//, path);
      const first = await client.get(location);
      assert.equal(first.status, 200, `${path} -> ${location}`);
      assert.match(first.html, report, path);
      const reload = await client.get(location);
      assert.equal(reload.status, 200, `${path} -> ${location} again`);
      assert.doesNotMatch(reload.html, report, `${path}: a reload repeats nothing and reports nothing again`);
      return location;
    };

    await changes('/internal/dashboard/organisers', { name: 'Redirect Club' }, /Organiser Redirect Club created/);
    const venuePath = await changes(
      '/internal/dashboard/venues',
      { name: 'Redirect Hall', timeZone: 'Europe/Berlin' },
      /Venue Redirect Hall created/,
    );
    await changes(`${venuePath}/locations`, { displayName: 'Side room' }, /Location Side room added/);
    const keyPage = await changes(`${organiserPath}/keys`, { actorRole: 'owner' }, KEY_PATTERN);
    const keyId = decodeURIComponent(/\/keys\/([^/]+)\/created$/.exec(keyPage)?.[1] ?? '');
    await changes(`${organiserPath}/keys/${keyId}/revoke`, { actorRole: 'owner' }, /Key \S+ revoked\./);
    await changes(`${organiserPath}/events/${eventId}/publish`, {}, /Event Redirected is public/);
    await changes(`${organiserPath}/orders/${orderId}/confirm`, {}, new RegExp(`Order ${orderId} is confirmed`));
    await changes(`${webhookPath}/enable`, {}, /Re-enabled\./);
    await changes(`${webhookPath}/recover`, { since: '2026-01-01T00:00:00Z' }, /deliveries queued again/);
    const deliveries = await admin('GET', `/internal/webhooks/${webhookId}/deliveries`);
    const deliveryId: string = deliveries.body.data[0].id;
    // Pending or final, the answer is a redirect to the log with the outcome once.
    await changes(`${webhookPath}/deliveries/${deliveryId}/resend`, {}, /being sent again|only a final one is resent/);
    await changes(`${webhookPath}/rotate-secret`, {}, /whsec_[0-9a-f]{64}/);
  });

  it('offers every internal operation left: touch and delete an event, delete an order and a location, end portal access; a delete needs its box ticked, and another organiser’s rows are 404', async () => {
    const make = fixtures(service);
    const owner = await make.organiser();
    const stranger = await make.organiser();
    const admin = internalApi(service);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: owner.id, title: { EN: 'Touchable' }, startTime: '2031-02-01T20:00:00Z' },
    });
    const eventId: string = event.body.data.id;
    const order = await admin('POST', '/internal/orders', {
      body: { eventId, lineItems: [{ quantity: 1 }], totalAmountMinor: 100 },
    });
    const orderId: string = order.body.data.id;
    const venue = await make.venue({ locations: 2 });
    const venueDetail = await admin('POST', `/internal/venues/${venue.id}/locations`, {
      body: { displayName: 'Gone soon' },
    });
    const locationId: string = venueDetail.body.data.id;
    const link = await admin('POST', '/internal/portal-links', { body: { accountId: owner.id } });
    assert.equal(link.status, 201, link.text);
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    const flashAfter = (path: string, fields: Record<string, string> = {}) => postedPage(client, csrf, path, fields);

    const updatedBefore = event.body.data.updatedAt as string;
    assert.match(await flashAfter(`${base}/events/${eventId}/touch`), /Event Touchable touched/);
    const { rows: eventRows } = await app.db.query<{ updated_at: Date }>('SELECT updated_at FROM event WHERE id = $1', [
      eventId,
    ]);
    assert.ok(eventRows[0]!.updated_at.getTime() > Date.parse(updatedBefore), 'updatedAt moved');

    const strangers = `/internal/dashboard/organisers/${stranger.id}`;
    assert.equal((await client.post(`${strangers}/events/${eventId}/delete`, { confirm: '1' }, csrf)).status, 404);
    assert.equal((await client.post(`${strangers}/orders/${orderId}/delete`, { confirm: '1' }, csrf)).status, 404);
    assert.match(await flashAfter(`${base}/orders/${orderId}/delete`), /Not deleted: tick “I mean it”/);
    assert.match(
      await flashAfter(`${base}/orders/${orderId}/delete`, { confirm: '1' }),
      new RegExp(`Order ${orderId} deleted`),
    );
    assert.equal((await app.db.query('SELECT 1 FROM "order" WHERE id = $1', [orderId])).rowCount, 0);
    assert.match(
      await flashAfter(`${base}/events/${eventId}/delete`, { confirm: '1' }),
      new RegExp(`Event ${eventId} deleted`),
    );
    assert.equal((await app.db.query('SELECT 1 FROM event WHERE id = $1', [eventId])).rowCount, 0);

    const venuePage = await flashAfter(`/internal/dashboard/venues/${venue.id}/locations/${locationId}/delete`, {
      confirm: '1',
    });
    assert.match(venuePage, new RegExp(`Location Gone soon \\(${locationId}\\) deleted`));
    assert.ok(!venuePage.includes(`<code>${locationId}</code>`), 'left out of the venue');

    assert.match(
      await flashAfter(`${base}/portal-sessions/revoke`),
      /Portal access ended: 1 of its sessions and unopened links/,
    );
    const token = new URL(link.body.data.url as string).hash.replace('#token=', '');
    const opened = await new PortalClient(service.publicUrl).exchange(token);
    assert.equal(opened.status, 410, 'the unopened link no longer opens');
  });

  it('deletes a venue’s location only with its “I mean it” box ticked, naming the location; without it nothing is deleted', async () => {
    const venue = await fixtures(service).venue({ locations: 2 });
    const [locationId] = venue.locationIds;
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const venuePath = `/internal/dashboard/venues/${venue.id}`;
    const page = await client.get(venuePath);
    assert.match(
      page.html,
      /<input type="checkbox" name="confirm" value="1" required aria-label="I mean it: delete location Room 1">/,
    );
    const refused = await postedPage(client, csrf, `${venuePath}/locations/${locationId}/delete`, {});
    assert.match(refused, new RegExp(`Not deleted: tick “I mean it” to delete location Room 1 \\(${locationId}\\)`));
    assert.ok(refused.includes(`<code>${locationId}</code>`), 'still listed');
    const live = await app.db.query('SELECT 1 FROM venue_location WHERE id = $1 AND deleted_at IS NULL', [locationId]);
    assert.equal(live.rowCount, 1, 'nothing deleted');
    const deleted = await postedPage(client, csrf, `${venuePath}/locations/${locationId}/delete`, { confirm: '1' });
    assert.match(deleted, new RegExp(`Location Room 1 \\(${locationId}\\) deleted`));
    assert.ok(!deleted.includes(`<code>${locationId}</code>`), 'left out of the venue');
  });

  it('creates an event and an order and rewrites an order’s billing as the internal API does, refusing an order for another organiser’s event', async () => {
    const make = fixtures(service);
    const owner = await make.organiser();
    const stranger = await make.organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    const flashAfter = (path: string, fields: Record<string, string>) => postedPage(client, csrf, path, fields);
    const eventPage = await flashAfter(`${base}/events`, {
      title: 'Made on the dashboard',
      startTime: '2031-03-01T19:00:00Z',
      visibility: 'unlisted',
    });
    assert.match(eventPage, /Event Made on the dashboard created \(unlisted\)/);
    const { rows } = await app.db.query<{ id: string }>('SELECT id FROM event WHERE organizer_id = $1', [owner.id]);
    const eventId = rows[0]!.id;
    assert.match(
      (await refusedPage(client, csrf, `${base}/events`, { startTime: 'someday' })).html,
      /event-start-error/,
    );

    const foreignEvent = await make.event(stranger.id);
    const foreign = await refusedPage(client, csrf, `${base}/orders`, {
      eventId: foreignEvent.id,
      quantity: '1',
      totalAmountMinor: '100',
    });
    assert.match(
      foreign.html,
      /id="order-event-error" class="field-error">Event id \S+ is not an event of this organiser/,
    );
    const orderPage = await flashAfter(`${base}/orders`, {
      eventId,
      status: 'pending',
      quantity: '2',
      totalAmountMinor: '2500',
      billingName: 'Ada',
    });
    const orderId = /Order (ord_[0-9a-z]+) created \(pending\)/.exec(orderPage)?.[1];
    assert.ok(orderId !== undefined, orderPage.slice(0, 500));
    assert.match(
      (await refusedPage(client, csrf, `${base}/orders`, { eventId, quantity: 'two', totalAmountMinor: '1' })).html,
      /id="order-quantity-error"/,
    );
    const billing = await flashAfter(`${base}/orders/${orderId}/billing`, {
      billingName: 'Grace',
      billingEmail: 'g@x.test',
    });
    assert.match(billing, new RegExp(`Order ${orderId}: billing details saved`));
    const stored = await internalApi(service)('PATCH', `/internal/orders/${orderId}`, { body: {} });
    assert.equal(stored.body.data.billingName, 'Grace');
    assert.equal(stored.body.data.billingEmail, 'g@x.test');
    assert.equal(stored.body.data.quantity, 2);
  });

  it('requires a start for a new event, as the events list shows only events with one: without it nothing is made', async () => {
    const owner = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    assert.match((await client.get(`${base}/events`)).html, /<input id="event-start" name="startTime" required/);
    const refused = await refusedPage(client, csrf, `${base}/events`, { title: 'Whenever', visibility: 'draft' });
    assert.match(refused.html, /id="event-start-error" class="field-error">Start is required/);
    const { rowCount } = await app.db.query('SELECT 1 FROM event WHERE organizer_id = $1', [owner.id]);
    assert.equal(rowCount, 0);
  });

  it('says on the Start label that a time without an offset is read as UTC, as it is stored', async () => {
    const owner = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    assert.match(
      (await client.get(`${base}/events`)).html,
      /<label for="event-start">Start \([^<]*no offset means UTC\)/,
    );
    await postedPage(client, csrf, `${base}/events`, { title: 'Local?', startTime: '2031-03-01T19:00' });
    const { rows } = await app.db.query<{ start_time: Date }>('SELECT start_time FROM event WHERE organizer_id = $1', [
      owner.id,
    ]);
    assert.equal(rows[0]?.start_time.toISOString(), '2031-03-01T19:00:00.000Z');
  });

  it('refuses the event, order, billing and location forms in the words of their labels, never the internal API’s field names', async () => {
    const make = fixtures(service);
    const owner = await make.organiser();
    const event = await make.event(owner.id);
    const order = await make.order(event.id);
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    const refused = (path: string, fields: Record<string, string>) =>
      refusedPage(client, csrf, path, fields).then((page) => page.html);
    const eventRefusal = await refused(`${base}/events`, { title: 'Late', startTime: 'someday' });
    assert.match(eventRefusal, /class="field-error">Start must be an ISO 8601 date-time/);
    const orderRefusal = await refused(`${base}/orders`, {
      eventId: event.id,
      quantity: 'two',
      totalAmountMinor: 'ten',
      currency: 'euro',
    });
    assert.match(orderRefusal, /class="field-error">Quantity must be an integer number\./);
    assert.match(orderRefusal, /class="field-error">Total amount must be an integer number\./);
    assert.match(orderRefusal, /class="field-error">Currency must be a three-letter/);
    const billingRefusal = await refused(`${base}/orders/${order.id}/billing`, { billingName: 'b'.repeat(501) });
    assert.match(billingRefusal, /class="field-error">Billing name must be shorter than or equal to 500 characters/);
    for (const page of [eventRefusal, orderRefusal, billingRefusal]) {
      const refusals = [...page.matchAll(/class="field-error"[^>]*>([^<]*)<\/p>/g)].map((match) => match[1] ?? '');
      assert.ok(refusals.length > 0);
      for (const refusal of refusals) {
        assert.doesNotMatch(refusal, /startTime|lineItems|totalAmountMinor|currency|billingName/);
      }
    }
    const venue = await make.venue();
    const location = await client.post(
      `/internal/dashboard/venues/${venue.id}/locations`,
      { displayName: 'Side door', timeZone: 'Mars/Olympus' },
      csrf,
    );
    assert.equal(location.status, 400);
    assert.match(location.html, /id="location-time-zone-error" class="field-error">Time zone /);
    assert.doesNotMatch(location.html, /timeZone must|timeZone is/);
  });

  it('shows a refused new event again as typed, with its refusal beside the field it concerns and the focus there, and creates nothing', async () => {
    const owner = await fixtures(service).organiser();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    const refused = await refusedPage(client, csrf, `${base}/events`, {
      title: 'Kept <title>',
      startTime: 'someday',
      visibility: 'unlisted',
    });
    assert.match(refused.html, /<input id="event-title" name="title" maxlength="10000" value="Kept &lt;title&gt;"\s*>/);
    assert.match(
      refused.html,
      /<input id="event-start" name="startTime" required maxlength="40" value="someday"\s+aria-invalid="true" aria-describedby="event-start-error" autofocus>/,
    );
    assert.match(refused.html, /<p id="event-start-error" class="field-error">Start must be an ISO 8601 date-time/);
    assert.match(refused.html, /<option value="unlisted" selected>unlisted<\/option>/);
    assert.equal(refused.html.match(/\sautofocus\b/g)?.length, 1, 'one element takes the focus');
    assert.doesNotMatch(refused.html, /class="flash/, 'the refusal is beside the field, not a message at the top');
    const { rowCount } = await app.db.query('SELECT 1 FROM event WHERE organizer_id = $1', [owner.id]);
    assert.equal(rowCount, 0, 'nothing created');
  });

  it('shows a refused new order again as typed, each refusal beside its field and the focus on the first, and creates nothing', async () => {
    const make = fixtures(service);
    const owner = await make.organiser();
    const event = await make.event(owner.id);
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${owner.id}`;
    const refused = await refusedPage(client, csrf, `${base}/orders`, {
      eventId: event.id,
      status: 'confirmed',
      quantity: 'two',
      unitAmountMinor: '1250',
      totalAmountMinor: '2500',
      currency: 'euro',
      billingName: 'Ada',
      billingEmail: 'ada@example.test',
    });
    const html = refused.html;
    assert.match(
      html,
      new RegExp(`<input id="order-event" name="eventId" required maxlength="100" value="${event.id}"\\s*>`),
    );
    assert.match(html, /<option value="confirmed" selected>confirmed<\/option>/);
    assert.match(
      html,
      /<input id="order-quantity" [^>]*value="two" maxlength="15"\s+aria-invalid="true" aria-describedby="order-quantity-error" autofocus>/,
    );
    assert.match(html, /<p id="order-quantity-error" class="field-error">Quantity must be an integer number\.<\/p>/);
    assert.match(html, /<input id="order-unit" [^>]*value="1250"\s*>/);
    assert.match(html, /<input id="order-total" [^>]*value="2500"\s*>/);
    assert.match(
      html,
      /<input id="order-currency" [^>]*value="euro"\s+aria-invalid="true" aria-describedby="order-currency-error">/,
    );
    assert.match(html, /<p id="order-currency-error" class="field-error">Currency must be a three-letter/);
    assert.match(html, /<input id="order-billing-name" [^>]*value="Ada"\s*>/);
    assert.match(html, /<input id="order-billing-email" [^>]*value="ada@example.test"\s*>/);
    assert.equal(html.match(/\sautofocus\b/g)?.length, 1, 'one element takes the focus');
    assert.doesNotMatch(html, /class="flash/, 'the refusals are beside the fields, not a message at the top');
    const { rowCount } = await app.db.query('SELECT 1 FROM "order" WHERE event_id = $1', [event.id]);
    assert.equal(rowCount, 0, 'nothing created');
  });

  it('shows a refused billing rewrite in its order’s row, opened and as typed, with the refusal beside its field, and changes nothing', async () => {
    const make = fixtures(service);
    const owner = await make.organiser();
    const order = await make.order((await make.event(owner.id)).id, { billingName: 'Before' });
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const refused = await refusedPage(
      client,
      csrf,
      `/internal/dashboard/organisers/${owner.id}/orders/${order.id}/billing`,
      {
        billingName: 'b'.repeat(501),
        billingEmail: 'new@example.test',
      },
    );
    const html = refused.html;
    assert.equal(html.match(/<details open>/g)?.length, 1, 'the refused row’s billing form is open');
    assert.match(
      html,
      new RegExp(
        `<input id="billing-name-${order.id}" name="billingName" maxlength="500" value="b{501}"\\s+aria-invalid="true" aria-describedby="billing-name-${order.id}-error" autofocus>`,
      ),
    );
    assert.match(
      html,
      new RegExp(
        `<p id="billing-name-${order.id}-error" class="field-error">Billing name must be shorter than or equal to 500`,
      ),
    );
    assert.match(html, new RegExp(`<input id="billing-email-${order.id}" [^>]*value="new@example.test"\\s*>`));
    assert.equal(html.match(/\sautofocus\b/g)?.length, 1, 'one element takes the focus');
    const { rows } = await app.db.query<{ billing_name: string; billing_email: string | null }>(
      'SELECT billing_name, billing_email FROM "order" WHERE id = $1',
      [order.id],
    );
    assert.deepEqual(rows[0], { billing_name: 'Before', billing_email: null }, 'nothing changed');
  });

  it('shows a refused portal link form again on its account’s page as typed, the refusal beside the seconds and the focus there, and makes no link', async () => {
    const make = fixtures(service);
    const accounts = [`organisers/${(await make.organiser()).id}`, `venues/${(await make.venue()).id}`];
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const links = async (): Promise<number> =>
      Number((await app.db.query<{ n: string }>('SELECT count(*) AS n FROM portal_link')).rows[0]?.n);
    const before = await links();
    for (const account of accounts) {
      const refused = await refusedPage(client, csrf, `/internal/dashboard/${account}/portal-link`, {
        ttlSeconds: '5',
        readOnly: 'true',
      });
      assert.match(
        refused.html,
        /<input id="portal-ttl" name="ttlSeconds" inputmode="numeric" value="5" maxlength="4"\s+aria-invalid="true" aria-describedby="portal-ttl-error" autofocus>/,
        account,
      );
      assert.match(
        refused.html,
        /<p id="portal-ttl-error" class="field-error">Seconds the link may be opened in must be a whole number from 60 to 3600/,
      );
      assert.match(refused.html, /<input id="portal-read-only" name="readOnly" type="checkbox" value="true" checked>/);
      assert.equal(refused.html.match(/\sautofocus\b/g)?.length, 1, `${account}: one element takes the focus`);
      assert.doesNotMatch(refused.html, /class="flash/, `${account}: not a message at the top`);
    }
    assert.equal(await links(), before, 'no link made');
  });

  /** An organiser with more events than a page holds (two more: one may be deleted), and more (pending) orders. */
  async function organiserOfTwoPages(): Promise<{ organiserId: string; eventIds: string[]; orderIds: string[] }> {
    const make = fixtures(service);
    const owner = await make.organiser();
    const eventIds: string[] = [];
    for (let i = 0; i < 52; i += 1) eventIds.push((await make.event(owner.id)).id);
    const orderIds: string[] = [];
    for (let i = 0; i < 51; i += 1) orderIds.push((await make.order(eventIds[0]!, { status: 'pending' })).id);
    return { organiserId: owner.id, eventIds, orderIds };
  }

  /** The address of a page's "Next page" link, as the browser follows it. */
  function nextPageOf(html: string): string {
    const href = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(html)?.[1];
    assert.ok(href !== undefined, 'the page has a Next page link');
    return href.replaceAll('&amp;', '&');
  }

  it('returns an action taken on a later page of events or orders to that page, keeping only a cursor of the pager’s shape', async () => {
    const { organiserId } = await organiserOfTwoPages();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${organiserId}`;
    // Orders first: the events' delete below may take the orders' event with it.
    for (const [list, action] of [
      ['orders', 'confirm'],
      ['events', 'touch'],
    ] as const) {
      const secondPage = nextPageOf((await client.get(`${base}/${list}`)).html);
      const cursor = new URL(secondPage, service.adminUrl).searchParams.get('cursor') ?? '';
      const page = await client.get(secondPage);
      assert.equal(page.status, 200);
      const rowId = new RegExp(`/${list}/([^/"]+)/${action}"`).exec(page.html)?.[1] ?? '';
      assert.equal(
        page.html.match(/<input type="hidden" name="cursor" value="([^"]+)">/g)?.length,
        page.html.match(/<input type="hidden" name="_csrf"/g)!.length - 1,
        `${list}: every form of the page but sign-out carries its cursor`,
      );
      const acted = await client.post(`${base}/${list}/${rowId}/${action}`, { cursor }, csrf);
      assert.equal(acted.status, 303, list);
      assert.equal(acted.location, secondPage, `${list}: back to the page it was taken on`);
      assert.match((await client.get(acted.location ?? '')).html, /touched: only its updatedAt moved|is confirmed/);
      for (const forged of [
        '//elsewhere.example/x',
        'https://elsewhere.example/',
        `${cursor}&x=1`,
        '../accounts',
        'a.b/../c',
      ]) {
        const answer = await client.post(`${base}/${list}/${rowId}/${action}`, { cursor: forged }, csrf);
        assert.equal(answer.location, `${base}/${list}`, `${list}: ${forged} is not a cursor: the first page`);
      }
      const deleted = await client.post(`${base}/${list}/${rowId}/delete`, { cursor, confirm: '1' }, csrf);
      assert.equal(deleted.location, secondPage, `${list}: a delete too`);
    }
    const secondPage = nextPageOf((await client.get(`${base}/events`)).html);
    const cursor = new URL(secondPage, service.adminUrl).searchParams.get('cursor') ?? '';
    const shown = await client.get(secondPage);
    const created = await client.post(
      `${base}/events`,
      { title: 'Made on page two', startTime: '2031-03-01T19:00:00Z', cursor },
      csrf,
    );
    assert.equal(created.location, secondPage, 'a new event returns to the page it was made on');
    await client.get(created.location ?? '');
    const refused = await refusedPage(client, csrf, `${base}/events`, { startTime: 'someday', cursor });
    const rowsOf = (html: string) => [...html.matchAll(/\/events\/([^/"]+)\/touch"/g)].map((match) => match[1]);
    assert.deepEqual(rowsOf(refused.html), rowsOf(shown.html), 'a refused form is shown again on its page');
    assert.match(refused.html, new RegExp(`<input type="hidden" name="cursor" value="${cursor}">`));
  });

  it('leads a Next page link whose page is gone (its row deleted, a cursor made up or of another list) to the first page, which says so', async () => {
    const { organiserId } = await organiserOfTwoPages();
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${organiserId}`;
    const firstPage = (await client.get(`${base}/events`)).html;
    const secondPage = nextPageOf(firstPage);
    const lastShown = [...firstPage.matchAll(/\/events\/([^/"]+)\/touch"/g)].at(-1)?.[1] ?? '';
    const kept = await client.get(secondPage);
    assert.equal(kept.status, 200, 'the link works while the row it continues from is there');
    const deleted = await internalApi(service)('DELETE', `/internal/events/${lastShown}`);
    assert.equal(deleted.status, 200, deleted.text);

    const eventsCursor = new URL(secondPage, service.adminUrl).searchParams.get('cursor') ?? '';
    const gone: Array<[string, string]> = [
      ['a page after a deleted event', secondPage],
      ['a cursor made up', `${base}/events?cursor=made-up.cursor`],
      ['a cursor of another list', `${base}/orders?cursor=${encodeURIComponent(eventsCursor)}`],
    ];
    for (const [what, path] of gone) {
      const list = path.includes('/orders') ? 'orders' : 'events';
      const answer = await client.get(path);
      assert.equal(answer.status, 303, `${what}: ${answer.html.slice(0, 300)}`);
      assert.equal(answer.location, `${base}/${list}`, what);
      const landed = await client.get(answer.location ?? '');
      assert.equal(landed.status, 200, what);
      assert.match(landed.html, new RegExp(`role="alert"[^>]*>The page of ${list} that link led to is gone`), what);
      assert.doesNotMatch((await client.get(answer.location ?? '')).html, /is gone/, `${what}: said once`);
    }
    const refused = await refusedPage(client, csrf, `${base}/events`, { startTime: 'someday', cursor: eventsCursor });
    assert.match(refused.html, /The page of events that link led to is gone/, 'a form refused on a gone page');
    assert.doesNotMatch(refused.html, /name="cursor"/, 'is shown again on the first page');
  });

  it('answers every error under the dashboard’s path with its HTML error page, status kept, while the internal API keeps its JSON body', async () => {
    const { webhookId } = await webhook();
    const url = (path: string) => `${service.adminUrl}${path}`;
    const cases: Array<[string, number, Promise<{ status: number; headers: Headers; text: string }>]> = [
      ['a route miss', 404, roundTrip(url('/internal/dashboard/nope'), 'GET', {})],
      ['GET on a form’s address', 405, roundTrip(url(`/internal/dashboard/webhooks/${webhookId}/enable`), 'GET', {})],
      ['a lone surrogate in the path', 400, roundTrip(url('/internal/dashboard/webhooks/%ED%A0%80'), 'GET', {})],
      ['an id of 3,000 characters', 414, roundTrip(url(`/internal/dashboard/webhooks/${'w'.repeat(3000)}`), 'GET', {})],
    ];
    for (const [name, status, answer] of cases) {
      const page = await answer;
      assert.equal(page.status, status, `${name}: ${page.text.slice(0, 200)}`);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/, name);
      assert.equal(page.headers.get('cache-control'), 'no-store', name);
      assert.match(page.text, /<a href="\/internal\/dashboard\/accounts">Back to the accounts<\/a>/, name);
    }
    assertErrorBody(await internalApi(service)('GET', '/internal/nope'), 404, 'not_found');
    assertErrorBody(
      await internalApi(service)('GET', `/internal/webhooks/${webhookId}/recover`),
      405,
      'method_not_allowed',
    );
    assertErrorBody(await publicApi(service)('GET', '/internal/dashboard/nope'), 404, 'not_found');
  });

  it('tells htmx to reload the page when a refresh of the log is refused (the webhook is gone)', async () => {
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    const refused = await client.get('/internal/dashboard/webhooks/whk_gone', { 'hx-request': 'true' });
    assert.equal(refused.status, 404);
    assert.equal(refused.headers.get('hx-refresh'), 'true');
    assert.equal((await client.get('/internal/dashboard/webhooks/whk_gone')).headers.get('hx-refresh'), null);
  });

  it('answers an unknown webhook, organiser or venue with an HTML 404 page', async () => {
    const client = new DashboardClient(service.adminUrl);
    await client.signIn(service.adminToken);
    for (const path of ['webhooks/whk_nope', 'organisers/org_nope', 'venues/ven_nope', 'organisers/org_nope/orders']) {
      const page = await client.get(`/internal/dashboard/${path}`);
      assert.equal(page.status, 404, path);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(page.html, /not found/);
    }
  });

  it("confirms and publishes only the organiser's own orders and events (another's is 404)", async () => {
    const make = fixtures(service);
    const owner = await make.organiser();
    const stranger = await make.organiser();
    const admin = internalApi(service);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: owner.id, title: { EN: 'Mine' }, startTime: '2031-01-01T20:00:00Z' },
    });
    const order = await admin('POST', '/internal/orders', {
      body: { eventId: event.body.data.id, lineItems: [{ quantity: 1 }], totalAmountMinor: 100 },
    });
    const client = new DashboardClient(service.adminUrl);
    const csrf = await client.signIn(service.adminToken);
    const base = `/internal/dashboard/organisers/${stranger.id}`;
    assert.equal((await client.post(`${base}/orders/${order.body.data.id}/confirm`, {}, csrf)).status, 404);
    assert.equal((await client.post(`${base}/events/${event.body.data.id}/publish`, {}, csrf)).status, 404);
    const stillPending = await client.get(`/internal/dashboard/organisers/${owner.id}/orders`);
    assert.match(stillPending.html, /badge-pending/);
  });

  it('marks the dashboard cookies Secure when the request came over TLS', async () => {
    // The admin listener is plain HTTP here, so the cookie options are checked on a TLS server of their own.
    const { key, cert } = receiverCertificate();
    const tls = Fastify({ https: { key, cert } });
    await tls.register(fastifyCookie);
    tls.get('/internal/dashboard/probe', (_request, reply) =>
      reply.setCookie('probe', 'x', DASHBOARD_COOKIE_OPTIONS).send('ok'),
    );
    const origin = await tls.listen({ host: '127.0.0.1', port: 0 });
    try {
      const response = await fetch(`${origin}/internal/dashboard/probe`);
      const cookie = response.headers.getSetCookie()[0] ?? '';
      assert.match(cookie, /; Secure/);
      assert.match(cookie, /; HttpOnly/);
      assert.match(cookie, /; SameSite=Strict/);
    } finally {
      await tls.close();
    }
  });
});

/** What the operator had in hand stays in hand: typed values, the place in each list, the page to return to. */
describe('dashboard keeps the operator’s place', () => {
  const app = withApp({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });

  /** The address of a pager's link ("Next page", "First page") on the accounts page, or null without one. */
  const pagerLink = (html: string, pager: 'Organisers' | 'Venues', text: string): string | null => {
    const nav = new RegExp(`<nav aria-label="${pager} pages"[^>]*>([\\s\\S]*?)</nav>`).exec(html)?.[1] ?? '';
    const href = new RegExp(`<a href="([^"]+)"[^>]*>${text}</a>`).exec(nav)?.[1];
    return href === undefined ? null : href.replaceAll('&amp;', '&');
  };
  const queryOf = (href: string | null): Record<string, string> =>
    Object.fromEntries(new URL(href ?? '', 'http://dashboard').searchParams);

  /** A subscription made through the public API (nothing is delivered: its receiver does not listen). */
  async function webhook(): Promise<string> {
    const organiser = await fixtures(app.service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const created = await publicApi(app.service)('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: 'https://127.0.0.1:9/hooks', events: ['event.published'] },
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data.id as string;
  }

  it('shows a refused rotation again on the page of the log it was sent from', async () => {
    const webhookId = await webhook();
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_rotor_', 105);
    const client = new DashboardClient(app.service.adminUrl);
    const csrf = await client.signIn(app.service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const older = await client.get(`${path}?before=dlv_rotor_0006`);
    assert.match(
      older.html,
      /rotate-secret" class="card"[^>]*>\s*<input type="hidden" name="_csrf"[^>]*>\s*<input type="hidden" name="before" value="dlv_rotor_0006">/,
      'the rotation form carries the page it is on',
    );
    const refused = await client.post(
      `${path}/rotate-secret`,
      { graceSeconds: 'soon', before: 'dlv_rotor_0006' },
      csrf,
    );
    assert.equal(refused.status, 400);
    assert.match(refused.html, /<p id="grace-seconds-error" class="field-error">/);
    assert.match(refused.html, /<code>dlv_rotor_0005<\/code>/, 'shown on the page of the log it was sent from');
    assert.doesNotMatch(refused.html, /<code>dlv_rotor_0105<\/code>/);
  });

  it('shows a refused recovery window again with what was typed, the refusal beside the field it names and the focus on it', async () => {
    const webhookId = await webhook();
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_typed_', 105);
    const client = new DashboardClient(app.service.adminUrl);
    const csrf = await client.signIn(app.service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;

    const unreadable = await client.post(`${path}/recover`, { since: 'yesterday <ish>', until: '2026-01-02' }, csrf);
    assert.equal(unreadable.status, 400);
    assertUnreadableSinceShown(unreadable.html);

    const backwards = await client.post(
      `${path}/recover`,
      { since: '2026-02-01T00:00:00Z', until: '2026-01-01', before: 'dlv_typed_0006' },
      csrf,
    );
    assert.equal(backwards.status, 400);
    assertUntilBeforeSinceShown(backwards.html);

    const later = await client.get(path);
    assert.doesNotMatch(later.html, /Since must be|Until must not/, 'the refusal is not left for a later page');
  });

  it('refreshes the log together with the health figures and warnings above it, and says so in a polite status', async () => {
    const webhookId = await webhook();
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_fresh_', 3);
    const client = new DashboardClient(app.service.adminUrl);
    await client.signIn(app.service.adminToken);
    const path = `/internal/dashboard/webhooks/${webhookId}`;
    const loaded = await client.get(path);
    const refresh = assertRefreshLinkShown(loaded.html);
    const target = /hx-select="([^"]+)"/.exec(refresh)?.[1] ?? '';
    assert.ok(
      !new RegExp(`id="${target.slice(1)}"[\\s\\S]*id="log-status"`).test(loaded.html),
      'the status is not replaced',
    );

    const refreshed = await client.get(path, { 'hx-request': 'true' });
    assert.equal(refreshed.status, 200);
    assertRefreshAnnounced(refreshed.html);
  });

  /** The sign-in form's address as a redirect gives it: the page it returns to, and why it is shown. */
  const signInOf = (location: string | null): { path: string; next: string | null; why: string | null } => {
    const url = new URL(location ?? '', 'http://dashboard');
    return { path: url.pathname, next: url.searchParams.get('next'), why: url.searchParams.get('why') };
  };
  /** A browser holding the same cookies, as another tab or the same browser sent to another instance. */
  const sameBrowser = (client: DashboardClient): DashboardClient => {
    const other = new DashboardClient(app.service.adminUrl);
    for (const [name, value] of client.cookies) other.cookies.set(name, value);
    return other;
  };

  it('sends a page whose session has ended to the sign-in form, which says so, and back to that page after the sign-in', async () => {
    const client = new DashboardClient(app.service.adminUrl);
    const csrf = await client.signIn(app.service.adminToken);
    assert.equal((await sameBrowser(client).post('/internal/dashboard/sign-out', {}, csrf)).status, 303);

    const asked = '/internal/dashboard/accounts?q=twin+pager&venues_cursor=x';
    const sent = await client.get(asked);
    assert.equal(sent.status, 303);
    assert.deepEqual(signInOf(sent.location), {
      path: '/internal/dashboard/sign-in',
      next: asked,
      why: 'session-ended',
    });
    const form = await client.get(sent.location ?? '');
    assert.equal(form.status, 200);
    assert.match(form.html, /<p id="sign-in-notice" class="warning">Your session ended; sign in again to go on\.<\/p>/);
    assert.match(form.html, /<input id="token"[^>]*autofocus\s+aria-describedby="sign-in-notice">/);
    assert.match(
      form.html,
      /<input type="hidden" name="next" value="\/internal\/dashboard\/accounts\?q=twin\+pager&amp;venues_cursor=x">/,
    );

    const mistyped = await client.post(
      '/internal/dashboard/sign-in',
      { token: 'not it', next: asked },
      csrfOf(form.html),
    );
    assert.equal(mistyped.status, 401);
    assert.match(
      mistyped.html,
      /<input type="hidden" name="next" value="[^"]+venues_cursor=x">/,
      'a mistyped token keeps the way back',
    );
    const signedIn = await client.post(
      '/internal/dashboard/sign-in',
      { token: app.service.adminToken, next: asked },
      csrfOf(mistyped.html),
    );
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.location, asked);
  });

  it('leads a sign-out whose session has already ended where a sign-out leads, saying nothing of a form not sent', async () => {
    const client = new DashboardClient(app.service.adminUrl);
    const csrf = await client.signIn(app.service.adminToken);
    await sameBrowser(client).post('/internal/dashboard/sign-out', {}, csrf);
    const signedOut = await client.post('/internal/dashboard/sign-out', {}, csrf, {
      referer: `${app.service.adminUrl}/internal/dashboard/accounts`,
    });
    assert.equal(signedOut.status, 303);
    assert.equal(signedOut.location, '/internal/dashboard/sign-in');
  });

  it('returns a form posted after its session ended to the page the form was on, without posting it, and says it was not sent', async () => {
    const client = new DashboardClient(app.service.adminUrl);
    const csrf = await client.signIn(app.service.adminToken);
    const formPage = '/internal/dashboard/accounts?q=unsent';
    await sameBrowser(client).post('/internal/dashboard/sign-out', {}, csrf);

    const posted = await client.post('/internal/dashboard/organisers', { name: 'Unsent organiser' }, csrf, {
      referer: `${app.service.adminUrl}${formPage}`,
    });
    assert.equal(posted.status, 303);
    assert.deepEqual(signInOf(posted.location), {
      path: '/internal/dashboard/sign-in',
      next: formPage,
      why: 'form-not-sent',
    });
    const form = await client.get(posted.location ?? '');
    assert.match(
      form.html,
      /Your session ended before your form was sent, so nothing was changed; sign in again to go on\./,
    );
    const signedIn = await client.post(
      '/internal/dashboard/sign-in',
      { token: app.service.adminToken, next: formPage },
      csrfOf(form.html),
    );
    assert.equal(signedIn.location, formPage, 'back on the page the form was on, never posting it again');
    assert.match((await client.get(formPage)).html, /No organisers match/, 'nothing was made');

    // A refused form shown again has the form's own address in the address bar: that is no page to return to.
    await sameBrowser(client).post('/internal/dashboard/sign-out', {}, csrfOf((await client.get(formPage)).html));
    const fromRefused = await client.post('/internal/dashboard/webhooks/whk_x/recover', { since: 'x' }, csrf, {
      referer: `${app.service.adminUrl}/internal/dashboard/webhooks/whk_x/recover`,
    });
    assert.deepEqual(signInOf(fromRefused.location), {
      path: '/internal/dashboard/sign-in',
      next: null,
      why: 'form-not-sent',
    });
  });

  it('says the session ended after a sign-out in another tab dropped the cookie, when the browser still acts from a dashboard page', async () => {
    const signedOut = new DashboardClient(app.service.adminUrl);
    const page = '/internal/dashboard/webhooks/whk_elsewhere';
    const linkFollowed = await signedOut.get(page, { referer: `${app.service.adminUrl}/internal/dashboard/accounts` });
    assert.deepEqual(signInOf(linkFollowed.location), {
      path: '/internal/dashboard/sign-in',
      next: page,
      why: 'session-ended',
    });
    const refreshed = await signedOut.get(page, { 'hx-request': 'true' });
    assert.equal(refreshed.status, 200);
    assert.deepEqual(signInOf(refreshed.headers.get('hx-redirect')), {
      path: '/internal/dashboard/sign-in',
      next: page,
      why: 'session-ended',
    });
    const typed = await signedOut.get(page);
    assert.deepEqual(
      signInOf(typed.location),
      { path: '/internal/dashboard/sign-in', next: page, why: null },
      'a first visit says nothing of a session',
    );
    const fromSignIn = await signedOut.get(page, { referer: `${app.service.adminUrl}/internal/dashboard/sign-in` });
    assert.equal(signInOf(fromSignIn.location).why, null);
    const fromElsewhere = await signedOut.get(page, { referer: 'https://evil.example/internal/dashboard/accounts' });
    assert.equal(signInOf(fromElsewhere.location).why, null, 'a page of another site is no page of this dashboard');
    const postedElsewhere = await signedOut.post('/internal/dashboard/organisers', { name: 'x' }, 'token', {
      referer: 'https://evil.example/internal/dashboard/instances',
    });
    assert.deepEqual(signInOf(postedElsewhere.location), {
      path: '/internal/dashboard/sign-in',
      next: null,
      why: 'form-not-sent',
    });
    assert.doesNotMatch((await signedOut.get('/internal/dashboard/sign-in?why=nonsense')).html, /sign-in-notice/);
  });

  it('returns after a sign-in only to a page of this dashboard opened with GET: any other return address leads to the accounts page', async () => {
    const origin = app.service.adminUrl;
    const refused = [
      'https://evil.example/internal/dashboard/accounts',
      `${origin}/internal/dashboard/instances`,
      '//evil.example/internal/dashboard/accounts',
      '///evil.example/internal/dashboard',
      '/\\evil.example/internal/dashboard',
      '\\\\evil.example\\internal\\dashboard',
      '/internal/dashboard//evil.example',
      '/internal/dashboard/\\evil.example',
      '/internal/dashboard/..\\..\\evil',
      '/internal/dashboard/../../evil',
      '/internal/dashboard/%2e%2e/%2E%2E/evil',
      '/internal/dashboard/..%2f..%2fevil',
      '/internal/dashboard/%5c%5cevil.example',
      '/internal/dashboardevil',
      'internal/dashboard/accounts',
      'javascript:alert(1)//internal/dashboard',
      'data:text/html,/internal/dashboard',
      '/internal/dashboard/accounts\r\nLocation: https://evil.example',
      '/internal/dashboard/accounts%0d%0aSet-Cookie:%20x=1',
      '/internal/dashboard/accounts\tx',
      '/internal/dashboard/accounts x',
      '/internal/dashboard/accounts?q=é',
      '/internal/dashboard/accounts#https://evil.example',
      `/internal/dashboard/accounts?q=${'a'.repeat(3000)}`,
      '/internal/dashboard/sign-out',
      '/internal/dashboard/sign-in?next=https://evil.example',
      '/internal/dashboard/webhooks/whk_x/recover',
    ];
    const landed: string[] = [];
    for (const next of refused) {
      const client = new DashboardClient(origin);
      const form = await client.get(`/internal/dashboard/sign-in?next=${encodeURIComponent(next)}`);
      const carried = /name="next"/.test(form.html) ? 'carried' : 'dropped';
      const signedIn = await client.post(
        '/internal/dashboard/sign-in',
        { token: app.service.adminToken, next },
        csrfOf(form.html),
      );
      const again = await client.get(`/internal/dashboard/sign-in?next=${encodeURIComponent(next)}`);
      landed.push(
        `${JSON.stringify(next).slice(0, 80)}: ${form.status} ${carried}, ${signedIn.status} ${signedIn.location}, ${again.location}`,
      );
    }
    assert.deepEqual(
      landed,
      refused.map(
        (next) =>
          `${JSON.stringify(next).slice(0, 80)}: 200 dropped, 303 /internal/dashboard/accounts, /internal/dashboard/accounts`,
      ),
    );

    const client = new DashboardClient(origin);
    const form = await client.get('/internal/dashboard/sign-in?next=%2Finternal%2Fdashboard%2Finstances');
    const signedIn = await client.post(
      '/internal/dashboard/sign-in',
      { token: app.service.adminToken, next: '/internal/dashboard/instances' },
      csrfOf(form.html),
    );
    assert.equal(signedIn.location, '/internal/dashboard/instances', 'a page of the dashboard is returned to');
  });

  it('offers on an error page the way back to the dashboard page the refused request came from, and to no other address', async () => {
    const origin = app.service.adminUrl;
    const client = new DashboardClient(origin);
    await client.signIn(app.service.adminToken);
    const backLink = (html: string): string | null =>
      /<a href="([^"]*)">Back to the page you came from<\/a>/.exec(html)?.[1]?.replaceAll('&amp;', '&') ?? null;

    const cameFrom = '/internal/dashboard/accounts?q=gone&venues_cursor=x';
    const gone = await client.get('/internal/dashboard/webhooks/whk_gone', { referer: `${origin}${cameFrom}` });
    assert.equal(gone.status, 404);
    assert.equal(backLink(gone.html), cameFrom, 'a link followed to a webhook that is gone');
    assert.match(gone.html, /<a href="\/internal\/dashboard\/accounts">Back to the accounts<\/a>/);
    const routeMiss = await client.get('/internal/dashboard/nowhere', { referer: `${origin}${cameFrom}` });
    assert.equal(backLink(routeMiss.html), cameFrom, 'an address no route serves');
    const stale = await client.post('/internal/dashboard/organisers', { name: 'x' }, 'stale-token', {
      referer: `${origin}${cameFrom}`,
    });
    assert.equal(stale.status, 403);
    assert.equal(backLink(stale.html), cameFrom, 'a form whose token is stale: back to the page it was on');

    for (const referer of [
      'https://evil.example/internal/dashboard/instances',
      `${origin}/internal/dashboard//evil.example`,
      `${origin}/internal/dashboard/webhooks/whk_gone`,
      `${origin}/internal/dashboard/webhooks/whk_x/recover`,
      `${origin}/internal/dashboard/accounts`,
      'not a url',
    ]) {
      const page = await client.get('/internal/dashboard/webhooks/whk_gone', { referer });
      assert.equal(page.status, 404, referer);
      assert.equal(backLink(page.html), null, referer);
    }
  });

  it('pages the organisers and the venues each on its own: a link of one pager keeps the other’s place and the search', async () => {
    const admin = internalApi(app.service);
    for (let n = 0; n < 27; n += 1) {
      const suffix = String(n).padStart(2, '0');
      const organiser = await admin('POST', '/internal/organisers', {
        body: { name: `Twin pager organiser ${suffix}` },
      });
      assert.equal(organiser.status, 201, organiser.text);
      const venue = await admin('POST', '/internal/venues', {
        body: { name: `Twin pager venue ${suffix}`, locations: [] },
      });
      assert.equal(venue.status, 201, venue.text);
    }
    const client = new DashboardClient(app.service.adminUrl);
    await client.signIn(app.service.adminToken);
    const first = await client.get('/internal/dashboard/accounts?q=twin+pager');
    assert.equal(first.status, 200);

    const venuesNext = pagerLink(first.html, 'Venues', 'Next page');
    const venuesOnly = queryOf(venuesNext);
    assert.equal(venuesOnly['q'], 'twin pager');
    assert.ok(venuesOnly['venues_cursor']);
    const onVenuePage2 = await client.get(venuesNext ?? '');
    assert.match(onVenuePage2.html, /Twin pager venue 00/);

    const organisersNext = pagerLink(onVenuePage2.html, 'Organisers', 'Next page');
    const { organisers_cursor: organisersCursor, ...kept } = queryOf(organisersNext);
    assert.ok(organisersCursor, 'the organisers’ next page');
    assert.deepEqual(
      kept,
      { q: 'twin pager', venues_cursor: venuesOnly['venues_cursor'] },
      'paging the organisers keeps the venues’ page',
    );
    const bothOnPage2 = await client.get(organisersNext ?? '');
    assert.match(bothOnPage2.html, /Twin pager organiser 00/);
    assert.match(bothOnPage2.html, /Twin pager venue 00/, 'the venues stayed on their second page');
    assert.doesNotMatch(bothOnPage2.html, /Twin pager venue 26/);

    const venuesFirst = queryOf(pagerLink(bothOnPage2.html, 'Venues', 'First page'));
    assert.deepEqual(venuesFirst, { q: 'twin pager', organisers_cursor: organisersCursor });
    const organisersFirst = queryOf(pagerLink(bothOnPage2.html, 'Organisers', 'First page'));
    assert.deepEqual(organisersFirst, { q: 'twin pager', venues_cursor: venuesOnly['venues_cursor'] });
  });
});
