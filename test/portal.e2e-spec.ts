import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import fc from 'fast-check';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import {
  assertRefreshAnnounced,
  assertRefreshLinkShown,
  assertUnreadableSinceShown,
  assertUntilBeforeSinceShown,
} from './support/webhook-page-assertions';
import { captureLog } from './support/captured-log';
import { assertErrorBody } from './support/error-body';
import { csrfOf } from './support/dashboard-client';
import { DashboardClient } from './support/dashboard-client';
import { eventually } from './support/eventually';
import { internalApi, publicApi, roundTrip } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { ops as runOps, opsEnvFor } from './support/ops-cli';
import { mintPortalLink, PortalClient, tokenOf } from './support/portal-client';
import { roomInRateWindow } from './support/rate-window';
import { secondInstance } from './support/second-instance';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';
import { insertFailedHistoryDeliveries } from './support/webhook-rows';

/** Fast failures against a loopback receiver, and request logs kept for the fragment check. */
const ENV = {
  WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
  WEBHOOK_BACKOFF_BASE_MS: '20',
  WEBHOOK_BACKOFF_MAX_MS: '40',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_MAX_ATTEMPTS: '2',
  LOG_LEVEL: 'info',
};

interface AccountWithHooks {
  id: string;
  key: string;
  webhookIds: string[];
  deliveryIds: string[];
}

/** Everything a portal could change, read straight from the tables (before/after comparisons). */
async function webhookState(db: Client): Promise<string> {
  const parts = await Promise.all([
    db.query(
      `SELECT id, enabled, consecutive_failures, secret_sealed, previous_secret_sealed FROM webhook_subscription ORDER BY id`,
    ),
    db.query(`SELECT id, status, attempts, next_attempt_at FROM webhook_delivery_all ORDER BY id`),
    db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempt`),
    db.query(`SELECT count(*)::int AS n FROM webhook_warning`),
  ]);
  return JSON.stringify(parts.map((part) => part.rows));
}

/** The same page, minus what differs per request (request ids, timings). */
function stable(html: string): string {
  return html.replace(/<code>[0-9a-f-]{36}<\/code>/g, '');
}

describe('the webhook portal', () => {
  const log = captureLog();
  const app = withApp(ENV, { logTo: log.stream });
  let receiver: HttpsReceiver;
  let ours: AccountWithHooks;
  let theirs: AccountWithHooks;
  let venueId: string;
  const tokensSeen: string[] = [];

  async function accountWithFailingHook(name: string): Promise<AccountWithHooks> {
    const owner = await app.make.organiser({ name, scopes: ['webhooks:read', 'webhooks:write', 'events:read'] });
    const hook = await app.make.webhook(owner.key, `${receiver.origin}/${name}`, ['order.confirmed']);
    const event = await app.make.event(owner.id);
    await app.make.order(event.id);
    const deliveries = await eventually(async () => {
      const listed = await app.admin('GET', `/internal/webhooks/${hook.id}/deliveries`);
      const all = listed.body.data as Array<{ id: string; status: string }>;
      return all.length > 0 && all.every((d) => d.status === 'failed') ? all : undefined;
    }, `${name}'s delivery to fail`);
    return { id: owner.id, key: owner.key, webhookIds: [hook.id], deliveryIds: deliveries.map((d) => d.id) };
  }

  async function opened(accountId: string, options: { readOnly?: boolean } = {}): Promise<PortalClient> {
    const link = await mintPortalLink(app.service, accountId, options);
    tokensSeen.push(link.token);
    const client = new PortalClient(app.service.publicUrl);
    await client.open(link.token);
    return client;
  }

  before(async () => {
    receiver = await startHttpsReceiver(() => ({ status: 500, body: 'receiver down for upkeep' }));
    ours = await accountWithFailingHook('ours');
    theirs = await accountWithFailingHook('theirs');
    venueId = (await app.make.venue()).id;
  });
  after(async () => receiver.close());

  describe('links', () => {
    it('mints a link to PORTAL_URL with the token in the fragment, valid 900 seconds by default, storing only its hash', async () => {
      const before = Date.now();
      const link = await mintPortalLink(app.service, ours.id);
      tokensSeen.push(link.token);
      assert.ok(link.url.startsWith(`${app.service.config.portal.url}#token=`), link.url);
      assert.equal(link.readOnly, false);
      const ttl = (Date.parse(link.expiresAt) - before) / 1000;
      assert.ok(ttl > 890 && ttl < 910, `expires in ${ttl} s`);
      const stored = await app.db.query(`SELECT to_jsonb(l)::text AS row FROM portal_link l`);
      assert.ok(stored.rows.every((row: { row: string }) => !row.row.includes(link.token)));
    });

    it('mints a link for a venue too, and a read-only one when asked', async () => {
      const link = await mintPortalLink(app.service, venueId, { readOnly: true, ttlSeconds: 60 });
      assert.equal(link.readOnly, true);
    });

    it('answers 404 not_found for an account that is neither an organiser nor a venue', async () => {
      const minted = await app.admin('POST', '/internal/portal-links', { body: { accountId: 'org_nobody' } });
      assert.equal(minted.status, 404);
      assert.equal(minted.body.error, 'not_found');
    });

    it('refuses a ttlSeconds that is not a whole number from 60 to 3600 with 400 invalid_argument', async () => {
      for (const ttlSeconds of [59, 3601, 90.5, '900', null, -1]) {
        const minted = await app.admin('POST', '/internal/portal-links', { body: { accountId: ours.id, ttlSeconds } });
        assert.equal(minted.status, 400, `ttlSeconds ${JSON.stringify(ttlSeconds)}`);
        assert.equal(minted.body.error, 'invalid_argument');
      }
    });

    it('opens a link once: the session cookie is HttpOnly, SameSite=Strict, on /portal; a second opening is refused with a page that says so', async () => {
      const link = await mintPortalLink(app.service, ours.id);
      tokensSeen.push(link.token);
      const client = new PortalClient(app.service.publicUrl);
      const first = await client.exchange(link.token);
      assert.equal(first.status, 200);
      assert.equal(first.location, '/portal/subscriptions');
      const cookie = first.setCookie.find((line) => line.startsWith('portal_session='));
      assert.ok(cookie !== undefined);
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Strict/i);
      assert.match(cookie, /Path=\/portal(;|$)/);
      const again = await new PortalClient(app.service.publicUrl).exchange(link.token);
      assert.equal(again.status, 410);
      const page = await client.get(again.location);
      assert.equal(page.status, 410);
      assert.match(page.html, /already been opened/);
    });

    it('opens a link posted from the portal’s own page behind a trusted proxy that rewrites Host (Origin matches X-Forwarded-Host), and believes that header from TRUSTED_PROXIES only', async () => {
      const exchange = (publicUrl: string, token: string, origin: string) =>
        roundTrip(
          `${publicUrl}/portal/session`,
          'POST',
          {
            'content-type': 'application/json',
            host: 'backend:3410',
            origin,
            'x-forwarded-host': 'portal.example.com',
          },
          JSON.stringify({ token }),
        );
      const link = await mintPortalLink(app.service, ours.id);
      tokensSeen.push(link.token);
      const untrusting = await exchange(app.service.publicUrl, link.token, 'https://portal.example.com');
      assert.equal(untrusting.status, 403, 'X-Forwarded-Host from an untrusted peer is not believed');
      const behindProxy = await secondInstance(app.service, { TRUSTED_PROXIES: '127.0.0.1/32' });
      try {
        const foreign = await exchange(behindProxy.publicUrl, link.token, 'https://elsewhere.example.com');
        assert.equal(foreign.status, 403, 'an Origin other than the forwarded host is refused');
        const opened = await exchange(behindProxy.publicUrl, link.token, 'https://portal.example.com');
        assert.equal(opened.status, 200, opened.text);
        assert.match(opened.headers.getSetCookie().join('\n'), /portal_session=/);
      } finally {
        await behindProxy.close();
      }
    });

    it('refuses to open a link from a request without an Origin, as one from another origin, using up neither link', async () => {
      const link = await mintPortalLink(app.service, ours.id);
      tokensSeen.push(link.token);
      const client = new PortalClient(app.service.publicUrl);
      for (const origin of [null, 'https://elsewhere.example.com']) {
        const refused = await client.exchange(link.token, { origin });
        assert.equal(refused.status, 403, `Origin ${origin ?? 'missing'}`);
        assert.deepEqual(refused.setCookie, [], `Origin ${origin ?? 'missing'}: no session`);
      }
      const opened = await client.exchange(link.token);
      assert.equal(opened.status, 200, 'the link still opens from the portal’s own page');
    });

    it('serves the page a link opens whatever query the link was given (a mail tracker’s, or PORTAL_URL’s own)', async () => {
      const page = await new PortalClient(app.service.publicUrl).get('/portal?utm_source=mail&utm_medium=email');
      assert.equal(page.status, 200);
      assert.match(page.html, /id="portal-open"/);
    });

    it('offers the subscriptions of the session the browser still holds on the page that refuses a used link', async () => {
      const link = await mintPortalLink(app.service, ours.id);
      tokensSeen.push(link.token);
      const client = new PortalClient(app.service.publicUrl);
      assert.equal((await client.exchange(link.token)).status, 200);
      const again = await client.exchange(link.token);
      assert.equal(again.status, 410);
      const page = await client.get(again.location);
      assert.equal(page.status, 410);
      assert.match(page.html, /already been opened/);
      assert.match(
        page.html,
        /<a id="still-signed-in" href="\/portal\/subscriptions">go to your webhook subscriptions<\/a>/,
      );
      const stranger = await new PortalClient(app.service.publicUrl).get(again.location);
      assert.doesNotMatch(stranger.html, /still signed in/);
    });

    it('refuses an expired link', async () => {
      const link = await mintPortalLink(app.service, ours.id, { ttlSeconds: 60 });
      tokensSeen.push(link.token);
      // Sixty seconds pass.
      await app.db.query(`UPDATE portal_link SET expires_at = now() - interval '1 second' WHERE expires_at = $1`, [
        link.expiresAt,
      ]);
      const answer = await new PortalClient(app.service.publicUrl).exchange(link.token);
      assert.equal(answer.status, 410);
      assert.match(answer.location, /reason=expired/);
    });

    it('mints a link from the CLI: npm run ops -- portal:link --account <id> --read-only --ttl 120', async () => {
      const result = await runOps(
        ['portal:link', '--account', ours.id, '--read-only', '--ttl', '120'],
        opsEnvFor(app.service),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.json.data.readOnly, true);
      const client = new PortalClient(app.service.publicUrl);
      assert.equal((await client.exchange(tokenOf(result.json.data.url as string))).status, 200);
    });

    it("makes a link from the dashboard's account page and shows it once, after the redirect", async () => {
      const dashboard = new DashboardClient(app.service.adminUrl);
      await dashboard.signIn(app.service.adminToken);
      const page = await dashboard.get(`/internal/dashboard/organisers/${ours.id}`);
      const made = await dashboard.post(
        `/internal/dashboard/organisers/${ours.id}/portal-link`,
        { ttlSeconds: '300' },
        csrfOf(page.html),
      );
      assert.equal(made.status, 303);
      const shown = await dashboard.get(made.location ?? '');
      const url = /(http:\/\/\S+#token=[A-Za-z0-9_-]+)/.exec(shown.html)?.[1];
      assert.ok(url !== undefined, 'the link is on the page');
      assert.doesNotMatch((await dashboard.get(made.location ?? '')).html, /#token=/);
      assert.equal((await new PortalClient(app.service.publicUrl).exchange(tokenOf(url))).status, 200);
    });

    it('refuses a dashboard link for an account of the other kind in the path (a venue under /organisers/) with 404, minting nothing', async () => {
      const dashboard = new DashboardClient(app.service.adminUrl);
      await dashboard.signIn(app.service.adminToken);
      const page = await dashboard.get(`/internal/dashboard/organisers/${ours.id}`);
      const count = async (): Promise<number> =>
        Number((await app.db.query<{ n: string }>('SELECT count(*) AS n FROM portal_link')).rows[0]?.n);
      const before = await count();
      const refused = await dashboard.post(
        `/internal/dashboard/organisers/${venueId}/portal-link`,
        {},
        csrfOf(page.html),
      );
      assert.equal(refused.status, 404);
      assert.equal(await count(), before);
      const right = await dashboard.post(`/internal/dashboard/venues/${venueId}/portal-link`, {}, csrfOf(page.html));
      assert.equal(right.status, 303);
      assert.equal(right.location, `/internal/dashboard/venues/${venueId}`);
      assert.equal(await count(), before + 1);
    });

    it('keeps a link made on the dashboard sealed until it is shown: its token is in no stored row, as for a new key', async () => {
      const dashboard = new DashboardClient(app.service.adminUrl);
      await dashboard.signIn(app.service.adminToken);
      const page = await dashboard.get(`/internal/dashboard/organisers/${ours.id}`);
      const made = await dashboard.post(`/internal/dashboard/organisers/${ours.id}/portal-link`, {}, csrfOf(page.html));
      const { rows } = await app.db.query<{ state: string }>('SELECT state::text AS state FROM dashboard_session');
      assert.ok(rows.length > 0, 'the session is stored');
      const shown = await dashboard.get(made.location ?? '');
      const token = tokenOf(/(http:\/\/\S+#token=[A-Za-z0-9_-]+)/.exec(shown.html)?.[1] ?? '');
      tokensSeen.push(token);
      assert.ok(token.length > 20, 'the link is on the page');
      for (const row of rows) assert.ok(!row.state.includes(token), 'the stored session holds the token in plain text');
    });
  });

  describe('sessions', () => {
    it('ends a session after 30 minutes without a request, and 12 hours after the link was opened', async () => {
      const idle = await opened(ours.id);
      const idleId = await app.db.query(`SELECT id FROM portal_session ORDER BY created_at DESC LIMIT 1`);
      await app.db.query(`UPDATE portal_session SET last_seen_at = now() - interval '31 minutes' WHERE id = $1`, [
        idleId.rows[0].id,
      ]);
      const page = await idle.get('/portal/subscriptions');
      assert.equal(page.status, 401);
      assert.match(page.html, /session has ended/);

      const old = await opened(ours.id);
      const oldId = await app.db.query(`SELECT id FROM portal_session ORDER BY created_at DESC LIMIT 1`);
      await app.db.query(`UPDATE portal_session SET created_at = now() - interval '12 hours' WHERE id = $1`, [
        oldId.rows[0].id,
      ]);
      assert.equal((await old.get('/portal/subscriptions')).status, 401);
    });

    it('signs out: the cookie is cleared and the session refused from then on', async () => {
      const client = await opened(ours.id);
      const cookie = client.cookies.get('portal_session') ?? '';
      const page = await client.get('/portal/subscriptions');
      const out = await client.postFrom(page, '/portal/sign-out');
      assert.equal(out.status, 303);
      assert.equal(out.location, '/portal/signed-out');
      const replay = new PortalClient(app.service.publicUrl);
      replay.cookies.set('portal_session', cookie);
      assert.equal((await replay.get('/portal/subscriptions')).status, 401);
    });

    it('ends the session the browser already holds when it opens another link, server-side, so the first cookie opens nothing afterwards', async () => {
      const client = await opened(ours.id);
      const first = client.cookies.get('portal_session') ?? '';
      const second = await mintPortalLink(app.service, theirs.id);
      tokensSeen.push(second.token);
      assert.equal((await client.exchange(second.token)).status, 200);
      assert.notEqual(client.cookies.get('portal_session'), first);
      assert.match((await client.get('/portal/subscriptions')).html, new RegExp(theirs.webhookIds[0] ?? 'x'));
      const replay = new PortalClient(app.service.publicUrl);
      replay.cookies.set('portal_session', first);
      assert.equal((await replay.get('/portal/subscriptions')).status, 401);
    });

    it('keeps the session the browser holds when the link it opens is refused', async () => {
      const client = await opened(ours.id);
      const used = await mintPortalLink(app.service, ours.id);
      tokensSeen.push(used.token);
      assert.equal((await new PortalClient(app.service.publicUrl).exchange(used.token)).status, 200);
      assert.equal((await client.exchange(used.token)).status, 410);
      assert.equal((await client.get('/portal/subscriptions')).status, 200);
    });

    it('signs out onto the signed-out page also when the session has already ended', async () => {
      const client = await opened(ours.id);
      const page = await client.get('/portal/subscriptions');
      const cookie = client.cookies.get('portal_session') ?? '';
      assert.equal((await client.postFrom(page, '/portal/sign-out')).status, 303);
      // A second tab still shows the form of the ended session.
      const late = new PortalClient(app.service.publicUrl);
      late.cookies.set('portal_session', cookie);
      const again = await late.postFrom(page, '/portal/sign-out');
      assert.equal(again.status, 303);
      assert.equal(again.location, '/portal/signed-out');
      const cookieless = await new PortalClient(app.service.publicUrl).post('/portal/sign-out', {}, null);
      assert.equal(cookieless.location, '/portal/signed-out');
    });

    it('refuses a sign-out without the CSRF token while the session is live, and the session stays', async () => {
      const client = await opened(ours.id);
      const refused = await client.post('/portal/sign-out', {}, null);
      assert.equal(refused.status, 403);
      assert.equal((await client.get('/portal/subscriptions')).status, 200);
    });

    it('sets no cookie on a sign-out that ends no session or lacks its CSRF token: a forged one must not make the browser drop the real cookie', async () => {
      const url = `${app.service.publicUrl}/portal/sign-out`;
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      // A form posted from another site: SameSite=Strict keeps the session cookie out of it.
      const forged = await roundTrip(url, 'POST', form, '');
      assert.equal(forged.status, 303);
      assert.equal(forged.headers.get('location'), '/portal/signed-out');
      assert.deepEqual(forged.headers.getSetCookie(), [], 'a sign-out without a cookie clears none');
      const client = await opened(ours.id);
      const cookie = `portal_session=${client.cookies.get('portal_session') ?? ''}`;
      for (const [what, body] of [
        ['without a CSRF token', ''],
        ['with a forged CSRF token', '_csrf=forged'],
      ] as const) {
        const refused = await roundTrip(url, 'POST', { ...form, cookie }, body);
        assert.equal(refused.status, 403, what);
        assert.deepEqual(refused.headers.getSetCookie(), [], what);
      }
      const token = `_csrf=${encodeURIComponent(csrfOf((await client.get('/portal/subscriptions')).html))}`;
      const out = await roundTrip(url, 'POST', { ...form, cookie }, token);
      assert.equal(out.status, 303);
      assert.match(
        out.headers.getSetCookie().join('\n'),
        /^portal_session=;.*Expires=Thu, 01 Jan 1970/m,
        'ended: cleared',
      );
      const ended = await roundTrip(url, 'POST', { ...form, cookie }, token);
      assert.equal(ended.headers.get('location'), '/portal/signed-out');
      assert.deepEqual(ended.headers.getSetCookie(), [], 'the cookie of a session already ended is not cleared again');
    });

    it('tells htmx to reload the page when a refresh of the log is refused because the session has ended', async () => {
      const client = await opened(ours.id);
      const path = `/portal/subscriptions/${ours.webhookIds[0]}`;
      const fresh = await client.get(path, { 'hx-request': 'true' });
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers.get('hx-refresh'), null);
      const ended = client.cookies.get('portal_session') ?? '';
      await client.postFrom(fresh, '/portal/sign-out');
      client.cookies.set('portal_session', ended);
      const refused = await client.get(path, { 'hx-request': 'true' });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('hx-refresh'), 'true');
      assert.equal((await client.get(path)).headers.get('hx-refresh'), null, 'a page load is answered as before');
    });

    it('revokes every session and unopened link of the account through another instance, refused on every instance at once', async () => {
      const second = await secondInstance(app.service);
      try {
        const client = await opened(ours.id);
        const unopened = await mintPortalLink(app.service, ours.id);
        tokensSeen.push(unopened.token);
        const other = await opened(theirs.id);
        const revoked = await internalApi(second)('POST', `/internal/accounts/${ours.id}/portal-sessions/revoke`);
        assert.equal(revoked.status, 200);
        assert.equal(revoked.body.data.accountId, ours.id);
        assert.ok(revoked.body.data.revoked >= 2, JSON.stringify(revoked.body));
        // No cache: the very next request on either instance is refused.
        assert.equal((await client.get('/portal/subscriptions')).status, 401);
        const onSecond = new PortalClient(second.publicUrl);
        onSecond.cookies.set('portal_session', client.cookies.get('portal_session') ?? '');
        assert.equal((await onSecond.get('/portal/subscriptions')).status, 401);
        const late = await new PortalClient(app.service.publicUrl).exchange(unopened.token);
        assert.equal(late.status, 410);
        assert.match(late.location, /reason=revoked/);
        assert.equal((await other.get('/portal/subscriptions')).status, 200, "another account's session stays");
      } finally {
        await second.close();
      }
    });

    it('answers 404 not_found when revoking the sessions of an unknown account', async () => {
      const revoked = await app.admin('POST', '/internal/accounts/org_nobody/portal-sessions/revoke');
      assert.equal(revoked.status, 404);
    });
  });

  describe('scope', () => {
    it('accepts the portal cookie on no API route and no internal route, and no API key or admin token on a portal page', async () => {
      const client = await opened(ours.id);
      const cookie = `portal_session=${client.cookies.get('portal_session') ?? ''}`;
      const api = await fetch(`${app.service.publicUrl}/v1/webhooks`, { headers: { cookie } });
      assert.equal(api.status, 401);
      const internal = await fetch(`${app.service.adminUrl}/internal/webhooks/${ours.webhookIds[0]}`, {
        headers: { cookie },
      });
      assert.equal(internal.status, 401);
      for (const authorization of [`Bearer ${ours.key}`, `Bearer ${app.service.adminToken}`]) {
        const page = await fetch(`${app.service.publicUrl}/portal/subscriptions`, { headers: { authorization } });
        assert.equal(page.status, 401);
      }
      const onAdmin = await fetch(`${app.service.adminUrl}/portal/subscriptions`, { headers: { cookie } });
      assert.equal(onAdmin.status, 404);
    });

    it("answers another account's subscription, delivery and attempt with the very page an unknown id gets, on every portal route, changing nothing", async () => {
      const client = await opened(ours.id);
      const page = await client.get(`/portal/subscriptions/${ours.webhookIds[0]}`);
      const csrf = csrfOf(page.html);
      const ownHook = ours.webhookIds[0] ?? '';
      const ownDelivery = ours.deliveryIds[0] ?? '';
      type Route = (id: string) => { method: 'GET' | 'POST'; path: string; fields?: Record<string, string> };
      const routes: Route[] = [
        (id) => ({ method: 'GET', path: `/portal/subscriptions/${id}` }),
        (id) => ({ method: 'GET', path: `/portal/subscriptions/${id}/secret` }),
        (id) => ({ method: 'POST', path: `/portal/subscriptions/${id}/enable`, fields: { recover: 'true' } }),
        (id) => ({
          method: 'POST',
          path: `/portal/subscriptions/${id}/recover`,
          fields: { since: '2020-01-01T00:00:00Z' },
        }),
        (id) => ({ method: 'POST', path: `/portal/subscriptions/${id}/rotate-secret`, fields: { graceSeconds: '0' } }),
        (id) => ({
          method: 'POST',
          path: `/portal/subscriptions/${id}/deliveries/${ownDelivery}/resend`,
          fields: { force: 'true' },
        }),
        (id) => ({
          method: 'POST',
          path: `/portal/subscriptions/${ownHook}/deliveries/${id}/resend`,
          fields: { force: 'true' },
        }),
        (id) => ({
          method: 'POST',
          path: `/portal/subscriptions/${id}/deliveries/${id}/resend`,
          fields: { force: 'true' },
        }),
      ];
      const theirIds = [...theirs.webhookIds, ...theirs.deliveryIds];
      const call = async (route: Route, id: string) => {
        const { method, path, fields } = route(id);
        return method === 'GET' ? client.get(path) : client.post(path, fields ?? {}, csrf);
      };
      const unknown = await call(routes[0] ?? (() => ({ method: 'GET', path: '' })), 'wh_does_not_exist');
      assert.equal(unknown.status, 404);
      const stateBefore = await webhookState(app.db);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...routes), fc.constantFrom(...theirIds), async (route, id) => {
          const answer = await call(route, id);
          assert.equal(answer.status, 404, `${route(id).method} ${route(id).path}`);
          assert.equal(stable(answer.html), stable(unknown.html));
        }),
        { numRuns: 40 },
      );
      // Exhaustively too: the property's sample is random, the pairs are few.
      for (const route of routes) for (const id of theirIds) assert.equal((await call(route, id)).status, 404);
      assert.equal(await webhookState(app.db), stateBefore);
    });
  });

  describe('pages and actions', () => {
    it('lists the subscriptions with health, figures and warnings, and shows each attempt with its HTTP status', async () => {
      const client = await opened(ours.id);
      const list = await client.get('/portal/subscriptions');
      assert.equal(list.status, 200);
      assert.match(list.html, /badge-failing/);
      assert.match(list.html, /Success rate/);
      assert.doesNotMatch(list.html, /whsec_/, 'no secret on the list');
      assert.doesNotMatch(list.html, new RegExp(theirs.webhookIds[0] ?? 'x'));
      const detail = await client.get(`/portal/subscriptions/${ours.webhookIds[0]}`);
      assert.equal(detail.status, 200);
      assert.match(detail.html, /HTTP 500/);
      assert.match(detail.html, /Response body: /);
      assert.match(detail.html, /Missed while disabled/);
      assert.doesNotMatch(detail.html, /whsec_/);
    });

    it("shows each subscription's description, escaped, in the list and on its page, so two to one host can be told apart", async () => {
      const owner = await app.make.organiser({ name: 'described', scopes: ['webhooks:read', 'webhooks:write'] });
      const ids: string[] = [];
      for (const description of ['Orders to the <b>CRM</b>', 'Tickets to the box office']) {
        const created = await app.api('POST', '/v1/webhooks', {
          key: owner.key,
          body: { url: `${receiver.origin}/same-host`, events: ['order.confirmed'], description },
        });
        assert.equal(created.status, 201, created.text);
        ids.push(created.body.data.id as string);
      }
      const client = await opened(owner.id);
      const list = await client.get('/portal/subscriptions');
      assert.match(list.html, /Orders to the &lt;b&gt;CRM&lt;\/b&gt;/);
      assert.match(list.html, /Tickets to the box office/);
      assert.doesNotMatch(list.html, /<b>CRM<\/b>/);
      const page = await client.get(`/portal/subscriptions/${ids[1]}`);
      assert.match(page.html, /<dt>Description<\/dt><dd>Tickets to the box office<\/dd>/);
    });

    it('names each subscription by its host and its description (escaped, a long one shortened), or its id without one, in the list’s link, its page’s heading and title, so two to one host can be told apart', async () => {
      const owner = await app.make.organiser({ name: 'named', scopes: ['webhooks:read', 'webhooks:write'] });
      const long = 'Tickets for the harbour stage and the quayside tent, sent to the box office till';
      const ids: string[] = [];
      for (const description of ['Orders to the <b>CRM</b>', long, undefined]) {
        const created = await app.api('POST', '/v1/webhooks', {
          key: owner.key,
          body: { url: `${receiver.origin}/same-host`, events: ['order.confirmed'], description },
        });
        assert.equal(created.status, 201, created.text);
        ids.push(created.body.data.id as string);
      }
      const host = new URL(receiver.origin).host;
      const names = [
        `Webhook to ${host}: Orders to the &lt;b&gt;CRM&lt;/b&gt;`,
        `Webhook to ${host}: Tickets for the harbour stage and the quayside tent, sent…`,
        `Webhook to ${host} (${ids[2]})`,
      ];
      const client = await opened(owner.id);
      const list = (await client.get('/portal/subscriptions')).html;
      for (const [index, id] of ids.entries()) {
        const name = names[index] ?? '';
        assert.ok(list.includes(`<a href="/portal/subscriptions/${id}">${name}</a>`), `the list links ${name}`);
        const page = (await client.get(`/portal/subscriptions/${id}`)).html;
        assert.ok(page.includes(`<h1>${name}</h1>`), `the heading: ${name}`);
        assert.ok(page.includes(`<title>${name} · Webhook portal</title>`), `the title: ${name}`);
      }
      const longPage = (await client.get(`/portal/subscriptions/${ids[1]}`)).html;
      assert.ok(longPage.includes(`<dt>Description</dt><dd>${long}</dd>`), 'the page shows the description whole');
    });

    it('sends Cache-Control: no-store, a CSP of this origin only and frame-ancestors none on every portal answer', async () => {
      const client = await opened(ours.id);
      const answers = [
        await client.get('/portal'),
        await client.get('/portal/subscriptions'),
        await client.get('/portal/subscriptions/wh_unknown'),
        await client.get('/portal/assets/portal.js'),
        await new PortalClient(app.service.publicUrl).get('/portal/subscriptions'),
        await client.get('/portal/no-such-page'),
        // Written percent-encoded, the router's decoded match is the portal all the same.
        await client.get('/p%6Frtal/assets/portal.js'),
      ];
      for (const answer of answers) {
        assert.equal(answer.headers.get('cache-control'), 'no-store');
        const csp = answer.headers.get('content-security-policy') ?? '';
        assert.match(csp, /default-src 'self'/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.doesNotMatch(csp, /unsafe-inline/);
      }
      assert.doesNotMatch((await client.get('/portal')).html, /<script>/, 'no inline script');
    });

    it('reads no more than a form’s limit of any body on its routes, JSON included, before a session is checked', async () => {
      const post = (bytes: number) =>
        roundTrip(
          `${app.service.publicUrl}/portal/subscriptions/wh_any/enable`,
          'POST',
          { 'content-type': 'application/json' },
          JSON.stringify({ fields: 'x'.repeat(bytes) }),
        );
      assert.equal((await post(17 * 1024)).status, 413, 'past a form’s 16 KiB');
      assert.notEqual((await post(15 * 1024)).status, 413, 'within it: read (then refused by its own rules)');
    });

    it('sends a form once while its answer is pending, as the dashboard does: every page loads the same script from the portal itself', async () => {
      const client = await opened(ours.id);
      const page = await client.get(`/portal/subscriptions/${ours.webhookIds[0] ?? ''}`);
      assert.match(page.html, /<script src="\/portal\/assets\/submit-once\.js" defer><\/script>/);
      const script = await client.get('/portal/assets/submit-once.js');
      assert.equal(script.status, 200);
      assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
      assert.match(script.html, /addEventListener\('submit'/);
    });

    it('answers every error under /portal with its HTML error page, status and headers kept and a link back, while the API keeps its JSON body', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const cookie = `portal_session=${client.cookies.get('portal_session') ?? ''}`;
      const form = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
      const url = (path: string) => `${app.service.publicUrl}${path}`;
      const cases: Array<{
        name: string;
        status: number;
        answer: Promise<{ status: number; headers: Headers; text: string }>;
      }> = [
        { name: 'a route miss', status: 404, answer: roundTrip(url('/portal/nope'), 'GET', { cookie }) },
        {
          name: 'GET on a form’s address',
          status: 405,
          answer: roundTrip(url(`/portal/subscriptions/${webhookId}/enable`), 'GET', { cookie }),
        },
        {
          name: 'a NUL in the path',
          status: 400,
          answer: roundTrip(url('/portal/subscriptions/%00'), 'GET', { cookie }),
        },
        {
          name: 'a lone surrogate in the path',
          status: 400,
          answer: roundTrip(url('/portal/subscriptions/%ED%A0%80'), 'GET', { cookie }),
        },
        {
          name: 'an id of 3,000 characters',
          status: 414,
          answer: roundTrip(url(`/portal/subscriptions/${'w'.repeat(3000)}`), 'GET', { cookie }),
        },
        {
          name: 'a multipart form',
          status: 415,
          answer: roundTrip(
            url(`/portal/subscriptions/${webhookId}/recover`),
            'POST',
            { cookie, 'content-type': 'multipart/form-data; boundary=x' },
            '--x\r\nContent-Disposition: form-data; name="since"\r\n\r\n2026-01-01T00:00:00Z\r\n--x--\r\n',
          ),
        },
        {
          name: 'a body over the limit',
          status: 413,
          answer: roundTrip(
            url(`/portal/subscriptions/${webhookId}/recover`),
            'POST',
            form,
            `since=${'x'.repeat(20_000)}`,
          ),
        },
      ];
      for (const { name, status, answer } of cases) {
        const page = await answer;
        assert.equal(page.status, status, `${name}: ${page.text.slice(0, 200)}`);
        assert.match(page.headers.get('content-type') ?? '', /^text\/html/, name);
        assert.equal(page.headers.get('cache-control'), 'no-store', name);
        assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, name);
        assert.ok(page.headers.get('x-request-id'), name);
        assert.match(page.text, /<h1>Error \d{3}<\/h1>/, name);
        assert.match(page.text, /<a href="\/portal\/subscriptions">Back to your subscriptions<\/a>/, name);
      }
      const notAllowed = await roundTrip(url(`/portal/subscriptions/${webhookId}/enable`), 'GET', {});
      assert.equal(notAllowed.headers.get('allow'), 'POST');
      assert.match(notAllowed.text, /where a form is sent, not a page to open/);
      assertErrorBody(await app.api('GET', '/v1/nope'), 404, 'not_found');
      assertErrorBody(await app.api('GET', `/v1/events/${'e'.repeat(3000)}`), 414, 'invalid_argument');
      const onAdmin = await internalApi(app.service)('GET', '/portal/nope');
      assertErrorBody(onAdmin, 404, 'not_found');
    });

    it('lets PORTAL_FRAME_ANCESTORS name the origins that may frame the portal', async () => {
      const framed = await secondInstance(app.service, { PORTAL_FRAME_ANCESTORS: 'https://app.example.com' });
      try {
        const page = await fetch(`${framed.publicUrl}/portal`);
        assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors https:\/\/app\.example\.com$/);
        assert.equal(page.headers.get('x-frame-options'), null);
      } finally {
        await framed.close();
      }
    });

    it('refuses a form post without the CSRF token, changing nothing', async () => {
      const client = await opened(ours.id);
      const stateBefore = await webhookState(app.db);
      const refused = await client.post(`/portal/subscriptions/${ours.webhookIds[0]}/rotate-secret`, {}, null);
      assert.equal(refused.status, 403);
      assert.equal(await webhookState(app.db), stateBefore);
    });

    it("checks a form's CSRF token by value: a forged token and another live session's token are refused, changing nothing", async () => {
      const client = await opened(ours.id);
      const other = await opened(ours.id);
      const own = csrfOf((await client.get('/portal/subscriptions')).html);
      const othersToken = csrfOf((await other.get('/portal/subscriptions')).html);
      assert.notEqual(othersToken, own, 'each session has its own token');
      const forged = `${own.slice(0, -1)}${own.endsWith('A') ? 'B' : 'A'}`;
      const stateBefore = await webhookState(app.db);
      for (const [what, token] of [
        ['a forged token', forged],
        ["another live session's token", othersToken],
      ] as const) {
        const refused = await client.post(`/portal/subscriptions/${ours.webhookIds[0]}/rotate-secret`, {}, token);
        assert.equal(refused.status, 403, what);
        assert.equal(await webhookState(app.db), stateBefore, `${what} changed nothing`);
      }
      assert.equal((await other.get('/portal/subscriptions')).status, 200, 'the other session is live');
    });

    it('answers a form posted in another encoding (multipart) with 415 saying forms are posted urlencoded, changing nothing', async () => {
      const client = await opened(ours.id);
      const stateBefore = await webhookState(app.db);
      const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const refused = await roundTrip(
        `${app.service.publicUrl}/portal/subscriptions/${ours.webhookIds[0]}/recover`,
        'POST',
        { cookie, 'content-type': 'multipart/form-data; boundary=x' },
        '--x\r\nContent-Disposition: form-data; name="since"\r\n\r\n2026-01-01T00:00:00Z\r\n--x--\r\n',
      );
      assert.equal(refused.status, 415);
      assert.match(refused.text, /x-www-form-urlencoded/);
      assert.equal(await webhookState(app.db), stateBefore);
    });

    it('refuses a body that is not a form (JSON) on every portal form route with its 415 page, CSRF token or not, changing nothing', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const csrf = csrfOf((await client.get(`/portal/subscriptions/${webhookId}`)).html);
      const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const stateBefore = await webhookState(app.db);
      const posts: Array<[string, Record<string, string>]> = [
        [`/portal/subscriptions/${webhookId}/recover`, { since: '2020-01-01T00:00:00Z' }],
        [`/portal/subscriptions/${webhookId}/rotate-secret`, { graceSeconds: '0', confirmNoGrace: 'true' }],
        [`/portal/subscriptions/${webhookId}/enable`, { recover: 'true' }],
        [`/portal/subscriptions/${webhookId}/deliveries/${ours.deliveryIds[0]}/resend`, { force: 'true' }],
        ['/portal/sign-out', {}],
      ];
      for (const [path, fields] of posts) {
        for (const body of [{ _csrf: csrf, ...fields }, fields]) {
          const refused = await roundTrip(
            `${app.service.publicUrl}${path}`,
            'POST',
            { cookie, 'content-type': 'application/json' },
            JSON.stringify(body),
          );
          assert.equal(refused.status, 415, `${path} ${JSON.stringify(body)}: ${refused.text.slice(0, 200)}`);
          assert.match(refused.headers.get('content-type') ?? '', /^text\/html/, path);
          assert.match(refused.text, /<h1>Error 415<\/h1>/, path);
          assert.match(refused.text, /Forms are posted as application\/x-www-form-urlencoded\./, path);
          assert.deepEqual(refused.headers.getSetCookie(), [], path);
        }
      }
      assert.equal(await webhookState(app.db), stateBefore);
      assert.equal((await client.get('/portal/subscriptions')).status, 200, 'the session is still live');
    });

    it('refuses every action of a read-only link and shows no form for one, saying where the actions would be that the link is read only', async () => {
      const client = await opened(ours.id, { readOnly: true });
      const page = await client.get(`/portal/subscriptions/${ours.webhookIds[0]}`);
      assert.doesNotMatch(page.html, /rotate-secret|\/resend|\/recover/);
      assert.match(
        page.html,
        /<h2 id="actions-heading">Actions<\/h2>\s*<p>This link is read only: it shows everything and changes nothing/,
      );
      const stateBefore = await webhookState(app.db);
      const refused = await client.postFrom(page, `/portal/subscriptions/${ours.webhookIds[0]}/rotate-secret`);
      assert.equal(refused.status, 403);
      assert.match(refused.html, /read-only/);
      assert.equal(await webhookState(app.db), stateBefore);
    });

    it('rotates the secret and shows the new one once after the redirect; a reload neither repeats the rotation nor shows it again', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const page = await client.get(`/portal/subscriptions/${webhookId}`);
      const rotated = await client.postFrom(page, `/portal/subscriptions/${webhookId}/rotate-secret`, {
        graceSeconds: '60',
      });
      assert.equal(rotated.status, 303);
      assert.equal(rotated.location, `/portal/subscriptions/${webhookId}/secret`);
      const shown = await client.get(rotated.location ?? '');
      const secret = /value="(whsec_[0-9a-f]{64})"/.exec(shown.html)?.[1];
      assert.ok(secret !== undefined);
      const current = await app.admin('GET', `/internal/webhooks/${webhookId}`);
      assert.equal(current.body.data.secret, secret);
      const reload = await client.get(rotated.location ?? '');
      assert.equal(reload.status, 303);
      assert.doesNotMatch(reload.html, /whsec_/);
      assert.equal(
        (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret,
        secret,
        'not rotated again',
      );
    });

    it('shows each rotated subscription’s new secret once, even when another was rotated before its page was loaded', async () => {
      const owner = await app.make.organiser({ name: 'two hooks', scopes: ['webhooks:read', 'webhooks:write'] });
      const first = await app.make.webhook(owner.key, `${receiver.origin}/first`, ['order.confirmed']);
      const second = await app.make.webhook(owner.key, `${receiver.origin}/second`, ['order.confirmed']);
      const client = await opened(owner.id);
      // Showings still owed from long ago take no room from these: the oldest go first, past ten.
      await app.db.query(
        `UPDATE portal_session SET secret_reveal_webhook_ids = array_fill('wh_gone'::text, ARRAY[10])
          WHERE account_id = $1`,
        [owner.id],
      );
      const page = await client.get(`/portal/subscriptions/${first.id}`);
      for (const id of [first.id, second.id]) {
        const rotated = await client.postFrom(page, `/portal/subscriptions/${id}/rotate-secret`, {
          graceSeconds: '60',
        });
        assert.equal(rotated.location, `/portal/subscriptions/${id}/secret`);
      }
      for (const id of [first.id, second.id]) {
        const shown = await client.get(`/portal/subscriptions/${id}/secret`);
        assert.equal(shown.status, 200, `the secret of ${id}`);
        const secret = /value="(whsec_[0-9a-f]{64})"/.exec(shown.html)?.[1];
        assert.equal(secret, (await app.admin('GET', `/internal/webhooks/${id}`)).body.data.secret);
        assert.equal((await client.get(`/portal/subscriptions/${id}/secret`)).status, 303, 'shown once');
      }
    });

    it('rotates with no grace period only with its box ticked: the old secret must not stop signing by a slip', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const before = (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret as string;
      const page = await client.get(`/portal/subscriptions/${webhookId}`);
      const refused = await client.postFrom(page, `/portal/subscriptions/${webhookId}/rotate-secret`, {
        graceSeconds: '0',
      });
      assert.equal(refused.status, 400);
      assert.match(refused.html, /With 0 seconds the current secret stops signing at once/);
      assert.equal(
        (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret,
        before,
        'nothing rotated',
      );
      const again = await client.get(`/portal/subscriptions/${webhookId}`);
      const confirmed = await client.postFrom(again, `/portal/subscriptions/${webhookId}/rotate-secret`, {
        graceSeconds: '0',
        confirmNoGrace: 'true',
      });
      assert.equal(confirmed.location, `/portal/subscriptions/${webhookId}/secret`);
      assert.notEqual((await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret, before);
    });

    it('rotates while the previous secret is still in its grace period only with its box ticked: that secret must not stop signing by a slip', async () => {
      const owner = await app.make.organiser({ name: 'grace', scopes: ['webhooks:read', 'webhooks:write'] });
      const webhookId = (await app.make.webhook(owner.key, `${receiver.origin}/grace`, ['order.confirmed'])).id;
      const client = await opened(owner.id);
      const rotate = async (fields: Record<string, string>) =>
        client.postFrom(
          await client.get(`/portal/subscriptions/${webhookId}`),
          `/portal/subscriptions/${webhookId}/rotate-secret`,
          fields,
        );
      assert.equal((await rotate({ graceSeconds: '60' })).location, `/portal/subscriptions/${webhookId}/secret`);
      const during = (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret as string;
      const refused = await rotate({ graceSeconds: '60' });
      assert.equal(refused.status, 400);
      assert.match(refused.html, /still signs until .*Tick the box to confirm/);
      assert.equal(
        (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret,
        during,
        'nothing rotated',
      );
      const confirmed = await rotate({ graceSeconds: '60', confirmNoGrace: 'true' });
      assert.equal(confirmed.location, `/portal/subscriptions/${webhookId}/secret`);
      assert.notEqual((await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret, during);
    });

    it('answers HEAD like GET without using anything up: the new secret and the next page’s message are still shown to the GET that follows', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const page = await client.get(`/portal/subscriptions/${webhookId}`);
      const rotated = await client.postFrom(page, `/portal/subscriptions/${webhookId}/rotate-secret`, {
        graceSeconds: '60',
      });
      const secretPath = rotated.location ?? '';
      assert.equal((await client.head(secretPath)).status, 200);
      assert.equal((await client.head(secretPath)).status, 200, 'a second HEAD still finds the secret unshown');
      const shown = await client.get(secretPath);
      assert.equal(shown.status, 200);
      assert.match(shown.html, /value="whsec_[0-9a-f]{64}"/);
      assert.equal((await client.head(secretPath)).status, 303, 'once shown, HEAD answers as GET would');
      const resent = await client.postFrom(
        page,
        `/portal/subscriptions/${webhookId}/deliveries/${ours.deliveryIds[0]}/resend`,
      );
      assert.equal((await client.head(resent.location ?? '')).status, 200);
      assert.match((await client.get(resent.location ?? '')).html, /is being sent again/);
    });

    it('pages the delivery log: past the newest 100, an Older deliveries link leads on until every delivery has been shown once', async () => {
      const owner = await app.make.organiser({ name: 'paged', scopes: ['webhooks:read', 'webhooks:write'] });
      const hook = await app.make.webhook(owner.key, `${receiver.origin}/paged`, ['order.confirmed']);
      await insertFailedHistoryDeliveries(app.db, hook.id, 'dlv_paged_', 105);
      const client = await opened(owner.id);
      const seen: string[] = [];
      let path: string | undefined = `/portal/subscriptions/${hook.id}`;
      for (let pages = 0; path !== undefined && pages < 5; pages += 1) {
        const page = await client.get(path);
        assert.equal(page.status, 200);
        seen.push(...[...page.html.matchAll(/data-delivery="(dlv_paged_\d+)"/g)].map((match) => match[1] ?? ''));
        path = /id="older-deliveries" href="([^"#]+)/.exec(page.html)?.[1]?.replaceAll('&amp;', '&');
      }
      assert.equal(seen.length, 105);
      assert.equal(new Set(seen).size, 105, 'no delivery is shown twice');
      assert.deepEqual([seen[0], seen[100], seen.at(-1)], ['dlv_paged_0105', 'dlv_paged_0005', 'dlv_paged_0001']);
    });

    it('leads from an Older deliveries page back to the newest with a plain link, not a swap in place, so the address and the forms name the page shown', async () => {
      const owner = await app.make.organiser({ name: 'back to newest', scopes: ['webhooks:read', 'webhooks:write'] });
      const hook = await app.make.webhook(owner.key, `${receiver.origin}/back`, ['order.confirmed']);
      await insertFailedHistoryDeliveries(app.db, hook.id, 'dlv_back_', 105);
      const client = await opened(owner.id);
      const path = `/portal/subscriptions/${hook.id}`;
      const older = await client.get(`${path}?before=dlv_back_0006`);
      assert.match(older.html, /name="before" value="dlv_back_0006"/, 'the older page’s forms name it');
      const back = /<a [^>]*>Back to the newest<\/a>/.exec(older.html)?.[0] ?? '';
      assert.equal(back, `<a id="newest-deliveries" href="${path}#delivery-log">Back to the newest</a>`);
      const newest = await client.get(path);
      assert.doesNotMatch(newest.html, /name="before"/, 'the newest page’s forms name no older page');
      assert.match(
        newest.html,
        /<a id="refresh-log" [^>]*hx-get="[^"]*"[^>]*>Refresh the log<\/a>/,
        'refreshed in place',
      );
    });

    it('returns an action taken on an Older deliveries page to that page, keeping only a cursor the log accepts', async () => {
      const owner = await app.make.organiser({ name: 'older page', scopes: ['webhooks:read', 'webhooks:write'] });
      const hook = await app.make.webhook(owner.key, `${receiver.origin}/older`, ['order.confirmed']);
      await insertFailedHistoryDeliveries(app.db, hook.id, 'dlv_older_', 105);
      const client = await opened(owner.id);
      const newest = await client.get(`/portal/subscriptions/${hook.id}`);
      const olderPath = /id="older-deliveries" href="([^"#]+)/.exec(newest.html)?.[1]?.replaceAll('&amp;', '&') ?? '';
      assert.match(olderPath, /\?before=dlv_older_0006$/);
      const older = await client.get(olderPath);
      const resent = await client.postFrom(older, `/portal/subscriptions/${hook.id}/deliveries/dlv_older_0002/resend`, {
        before: 'dlv_older_0006',
      });
      assert.equal(resent.status, 303);
      assert.equal(resent.location, olderPath);
      const shown = await client.get(resent.location ?? '');
      assert.match(shown.html, /Delivery dlv_older_0002 is being sent again/);
      // The row itself: its Resend button (data-delivery) is gone once the resend's attempt has failed and left it
      // pending, which a busy machine may see before this page is read.
      assert.match(shown.html, /<td><code>dlv_older_0002<\/code>/);
      for (const before of ['https://elsewhere.example/', 'dlv_not_of_this_log', '//elsewhere.example']) {
        // A window in the future recovers nothing: the fixture's deliveries all name one order, which the queue holds once.
        const forged = await client.postFrom(older, `/portal/subscriptions/${hook.id}/recover`, {
          since: '2099-01-01T00:00:00Z',
          before,
        });
        assert.equal(forged.location, `/portal/subscriptions/${hook.id}`, before);
      }
    });

    it('resends a delivery and recovers a window, each answered with a redirect and a message on the next page', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const page = await client.get(`/portal/subscriptions/${webhookId}`);
      const resent = await client.postFrom(
        page,
        `/portal/subscriptions/${webhookId}/deliveries/${ours.deliveryIds[0]}/resend`,
      );
      assert.equal(resent.status, 303);
      assert.match((await client.get(resent.location ?? '')).html, /is being sent again/);
      const recovered = await client.postFrom(page, `/portal/subscriptions/${webhookId}/recover`, {
        since: '2099-01-01T00:00:00Z',
      });
      assert.equal(recovered.status, 303);
      assert.match((await client.get(recovered.location ?? '')).html, /0 deliveries queued again/);
    });

    it('offers no recovery window on a disabled subscription (it would be refused), only re-enabling with recovery', async () => {
      const owner = await app.make.organiser({ name: 'disabled', scopes: ['webhooks:read', 'webhooks:write'] });
      const created = await app.api('POST', '/v1/webhooks', {
        key: owner.key,
        body: { url: `${receiver.origin}/disabled`, events: ['order.confirmed'], enabled: false },
      });
      assert.equal(created.status, 201, created.text);
      const client = await opened(owner.id);
      const page = await client.get(`/portal/subscriptions/${created.body.data.id}`);
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.html, /action="[^"]*\/recover"/);
      assert.match(page.html, /action="[^"]*\/enable"/);
      assert.match(page.html, /can be recovered once the subscription is enabled again/);
    });

    it('says in the page’s words, never the API’s force or recover, that a subscription was disabled after its page was shown, sending and queuing nothing', async () => {
      const owner = await app.make.organiser({ name: 'disabled since', scopes: ['webhooks:read', 'webhooks:write'] });
      const created = await app.api('POST', '/v1/webhooks', {
        key: owner.key,
        body: { url: `${receiver.origin}/disabled-since`, events: ['order.confirmed'] },
      });
      assert.equal(created.status, 201, created.text);
      const webhookId: string = created.body.data.id;
      const deliveryId = 'dlv_disabled_since_0001';
      await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_disabled_since_', 1);
      const client = await opened(owner.id);
      const page = await client.get(`/portal/subscriptions/${webhookId}`);
      assert.match(page.html, /action="[^"]*\/recover"/);
      // Disabled as twenty failures in a row disable it, between the page's load and the person's click.
      await app.db.query('UPDATE webhook_subscription SET enabled = false WHERE id = $1', [webhookId]);
      const queued = async () =>
        Number(
          (await app.db.query('SELECT count(*) AS n FROM webhook_delivery WHERE subscription_id = $1', [webhookId]))
            .rows[0].n,
        );
      const resent = await client.postFrom(page, `/portal/subscriptions/${webhookId}/deliveries/${deliveryId}/resend`);
      assert.equal(resent.status, 303);
      const resentSaid = (await client.get(resent.location ?? '')).html;
      assert.match(resentSaid, /disabled after the page was shown: nothing was sent/);
      assert.doesNotMatch(resentSaid, /with force/);
      const recovered = await client.postFrom(page, `/portal/subscriptions/${webhookId}/recover`, {
        since: '',
        until: '',
      });
      assert.equal(recovered.status, 303);
      const recoveredSaid = (await client.get(recovered.location ?? '')).html;
      assert.match(recoveredSaid, /disabled after the page was shown: nothing was queued/);
      assert.doesNotMatch(recoveredSaid, /Since must|with recover\)/);
      assert.equal(await queued(), 0, 'nothing sent or queued');
    });

    it('reads a recovery window written as the log shows times, while the JSON API keeps to ISO 8601 and epoch milliseconds', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const page = await client.get(`/portal/subscriptions/${webhookId}`);
      const shown = /<li>(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC), scheduled/.exec(page.html)?.[1];
      assert.ok(shown !== undefined, 'the log shows an attempt time');
      const recovered = await client.postFrom(page, `/portal/subscriptions/${webhookId}/recover`, {
        since: shown,
        until: '2099-01-01 00:00:00 UTC',
      });
      assert.equal(recovered.status, 303);
      assert.match((await client.get(recovered.location ?? '')).html, /deliveries queued again/);
      const api = await app.admin('POST', `/internal/webhooks/${webhookId}/recover`, { body: { since: shown } });
      assert.equal(api.status, 400);
      assert.equal(api.body.error, 'invalid_argument');
    });

    it('says what a form refuses in the words of its labels, never the JSON API’s field names, which the API keeps', async () => {
      const client = await opened(ours.id);
      const webhookId = ours.webhookIds[0] ?? '';
      const path = `/portal/subscriptions/${webhookId}`;
      const page = await client.get(path);
      const grace = await client.postFrom(page, `${path}/rotate-secret`, { graceSeconds: '604801' });
      assert.equal(grace.status, 400);
      const graceSaid = grace.html;
      assert.match(graceSaid, /Seconds the current secret keeps signing must be a whole number from 0 to 604800/);
      assert.doesNotMatch(graceSaid, /graceSeconds must/);
      const backwards = await client.postFrom(page, `${path}/recover`, {
        since: '2026-02-01T00:00:00Z',
        until: '2026-01-01T00:00:00Z',
      });
      assert.equal(backwards.status, 400);
      assert.match(backwards.html, /Until must not be before Since/);
      const stale = await client.get(`${path}?before=dlv_retained_no_more`);
      assert.equal(stale.status, 400);
      assert.match(stale.html, /This &quot;Older deliveries&quot; link is out of date/);
      assert.doesNotMatch(stale.html, /cursor/);
      const api = await app.admin('POST', `/internal/webhooks/${webhookId}/rotate-secret`, {
        body: { graceSeconds: 604801 },
      });
      assert.match(api.body.message, /^graceSeconds must be a whole number/);
    });

    it('answers an Older deliveries cursor no delivery id can have (a NUL) as an out-of-date link, never as a failure', async () => {
      const client = await opened(ours.id);
      const path = `/portal/subscriptions/${ours.webhookIds[0]}`;
      for (const before of ['%00', 'x%00y', 'a%20b']) {
        const page = await client.get(`${path}?before=${before}`);
        assert.equal(page.status, 400, before);
        assert.match(page.html, /link is out of date/);
      }
      const fresh = await client.get(path);
      const posted = await client.postFrom(fresh, `${path}/recover`, {
        since: '2099-01-01T00:00:00Z',
        before: 'a\u0000',
      });
      assert.equal(posted.status, 303);
      assert.equal(posted.location, path);
    });

    it("shows receivers how to verify a delivery, with the account's own subscription ids", async () => {
      const client = await opened(ours.id);
      const page = await client.get('/portal/verify');
      assert.equal(page.status, 200);
      assert.match(page.html, new RegExp(ours.webhookIds[0] ?? 'x'));
      assert.match(page.html, /standardwebhooks/);
      assert.match(page.html, /Service-Signature: t=/);
      assert.doesNotMatch(page.html, new RegExp(theirs.webhookIds[0] ?? 'x'));
    });
  });

  describe('the verification page’s Node snippet', () => {
    it('accepts a real signature and refuses a wrong one, or a v1 of another length, without throwing', async () => {
      const client = await opened(ours.id);
      const html = (await client.get('/portal/verify')).html;
      const snippet = /<code>(\/\/ Node, no library[\s\S]*?)\n\n/.exec(html)?.[1] ?? '';
      const code = snippet
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&quot;', '"')
        .replaceAll('&amp;', '&');
      assert.match(code, /timingSafeEqual/);
      const secret = `whsec_${'ab'.repeat(32)}`;
      const rawBody = Buffer.from('{"id":"evt_1","type":"order.confirmed"}');
      const t = String(Math.floor(Date.now() / 1000));
      const v1 = nodeCrypto.createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
      const verify = (header: string): unknown =>
        // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the page's own snippet, run as a receiver would
        new Function('crypto', 'header', 'rawBody', 'process', `${code}\nreturn ok;`)(nodeCrypto, header, rawBody, {
          env: { WEBHOOK_SECRET: secret },
        });
      assert.equal(verify(`t=${t},v1=${v1}`), true);
      assert.equal(verify(`t=${t},v1=${'0'.repeat(64)}`), false);
      assert.equal(verify(`t=${t},v1=abc`), false, 'a v1 of another length is refused, not a RangeError');
    });
  });

  describe('rate budget', () => {
    let limited: TestService;
    // Accounts of their own: budgets are counted in the database for every instance, so the reads other
    // tests made as another account in this minute must not count here.
    let budgeted: { id: string; key: string };
    let budgetedVenueId: string;
    before(async () => {
      limited = await secondInstance(app.service, { RATE_LIMIT_READS: '3', RATE_LIMIT_WRITES: '1' });
      budgeted = await app.make.organiser({ name: 'budgeted', scopes: ['webhooks:read', 'webhooks:write'] });
      budgetedVenueId = (await app.make.venue()).id;
    });
    after(async () => limited.close());

    it("counts portal reads against the account's read budget with API reads, and answers 429 with a page that explains the wait", async () => {
      // The budget is per clock minute: a new minute halfway through would start the count again.
      await roomInRateWindow();
      const client = new PortalClient(limited.publicUrl);
      await client.open((await mintPortalLink(app.service, budgeted.id)).token);
      const api = await publicApi(limited)('GET', '/v1/webhooks', { key: budgeted.key });
      assert.equal(api.status, 200);
      const third = await client.get('/portal/verify');
      assert.equal(third.status, 200);
      const refused = await client.get('/portal/verify');
      assert.equal(refused.status, 429);
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60);
      assert.match(refused.html, new RegExp(`Wait <strong>${wait} seconds</strong>`));
    });

    it('tells htmx to reload the page when a refresh of the log is refused because the budget is spent', async () => {
      const spender = await app.make.organiser({ name: 'htmx budget', scopes: ['webhooks:read'] });
      const client = new PortalClient(limited.publicUrl);
      await client.open((await mintPortalLink(app.service, spender.id)).token);
      // Three reads a minute: the fourth is refused, or a few more if a new minute began meanwhile.
      let refused = await client.get('/portal/verify', { 'hx-request': 'true' });
      for (let tries = 0; refused.status !== 429 && tries < 8; tries += 1) {
        refused = await client.get('/portal/verify', { 'hx-request': 'true' });
      }
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('hx-refresh'), 'true');
      assert.ok(refused.headers.get('retry-after'));
    });

    it("counts portal form posts against the account's write budget", async () => {
      await roomInRateWindow();
      const client = new PortalClient(limited.publicUrl);
      const csrf = await client.open((await mintPortalLink(app.service, budgetedVenueId)).token).catch(() => '');
      // The venue has no subscription: each post is a 404 that still costs a write.
      const first = await client.post('/portal/subscriptions/wh_none/recover', { since: '2020-01-01T00:00:00Z' }, csrf);
      const second = await client.post(
        '/portal/subscriptions/wh_none/recover',
        { since: '2020-01-01T00:00:00Z' },
        csrf,
      );
      assert.deepEqual([first.status, second.status], [404, 429]);
    });
  });

  it('never writes a link token (the fragment) into a log line', () => {
    assert.ok(tokensSeen.length > 5);
    assert.ok(log.lines.length > 0, 'the service logged its requests');
    const text = log.text();
    for (const token of tokensSeen) assert.ok(!text.includes(token), 'a token reached the log');
    assert.ok(
      log.lines.some((line) => line['url'] === '/portal/session'),
      'the exchange was logged, without its body',
    );
  });
});

/** What a person typed and where they were, kept by the portal's forms and its refresh of the log. */
describe('the webhook portal keeps what was typed and says what a refresh changed', () => {
  const app = withApp({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });

  /** A subscription of its own account, whose receiver does not listen (nothing is delivered), opened in a portal. */
  async function subscriptionInPortal(
    name: string,
    options: { readOnly?: boolean } = {},
  ): Promise<{ client: PortalClient; webhookId: string; accountId: string }> {
    const owner = await app.make.organiser({ name, scopes: ['webhooks:read', 'webhooks:write'] });
    const { id: webhookId } = await app.make.webhook(owner.key, 'https://127.0.0.1:9/hooks', ['event.published']);
    const client = new PortalClient(app.service.publicUrl);
    await client.open((await mintPortalLink(app.service, owner.id, options)).token);
    return { client, webhookId, accountId: owner.id };
  }

  it('shows a refused recovery window again with its 4xx status, what was typed, the refusal beside its field and the focus on it, writing nothing', async () => {
    const { client, webhookId } = await subscriptionInPortal('typed window');
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_typed_', 105);
    const path = `/portal/subscriptions/${webhookId}`;
    const page = await client.get(path);
    const stateBefore = await webhookState(app.db);

    const unreadable = await client.postFrom(page, `${path}/recover`, {
      since: 'yesterday <ish>',
      until: '2026-01-02',
    });
    assert.equal(unreadable.status, 400);
    assertUnreadableSinceShown(unreadable.html);

    const missing = await client.postFrom(page, `${path}/recover`, { until: '2026-01-02' });
    assert.equal(missing.status, 400);
    assert.match(missing.html, /<input id="recover-since"[^>]* value=""\s+aria-invalid="true"[^>]* autofocus>/);

    const backwards = await client.postFrom(page, `${path}/recover`, {
      since: '2026-02-01T00:00:00Z',
      until: '2026-01-01',
      before: 'dlv_typed_0006',
    });
    assert.equal(backwards.status, 400);
    assertUntilBeforeSinceShown(backwards.html);
    assert.equal(await webhookState(app.db), stateBefore, 'a refused window changes nothing');

    const later = await client.get(path);
    assert.doesNotMatch(later.html, /Since must be|Until must not/, 'the refusal is not left for a later page');
    const fine = await client.postFrom(later, `${path}/recover`, { since: '2099-01-01T00:00:00Z' });
    assert.equal(fine.status, 303, 'an accepted window still answers with a redirect');
    assert.match((await client.get(fine.location ?? '')).html, /0 deliveries queued again/);
  });

  it('shows a refused rotation again on the page of the log it was sent from', async () => {
    const { client, webhookId } = await subscriptionInPortal('rotation refused');
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_rotor_', 105);
    const path = `/portal/subscriptions/${webhookId}`;
    const older = await client.get(`${path}?before=dlv_rotor_0006`);
    assert.match(
      older.html,
      /rotate-secret" class="card"[^>]*>\s*<input type="hidden" name="_csrf"[^>]*>\s*<input type="hidden" name="before" value="dlv_rotor_0006">/,
      'the rotation form carries the page it is on',
    );
    const stateBefore = await webhookState(app.db);
    const refused = await client.postFrom(older, `${path}/rotate-secret`, {
      graceSeconds: 'soon',
      before: 'dlv_rotor_0006',
    });
    assert.equal(refused.status, 400);
    assert.equal(await webhookState(app.db), stateBefore, 'a refused rotation changes nothing');
    assert.match(
      refused.html,
      /<p id="grace-seconds-error" class="field-error">Seconds the current secret keeps signing must be a whole number/,
    );
    assert.match(refused.html, /<code>dlv_rotor_0005<\/code>/, 'shown on the page of the log it was sent from');
    assert.doesNotMatch(refused.html, /<code>dlv_rotor_0105<\/code>/);
    assert.match(refused.html, /name="before" value="dlv_rotor_0006"/, 'its forms still carry that page');
  });

  it('shows a refused rotation again with its 4xx status, the seconds typed, the refusal beside them or the unticked box and the focus there, rotating nothing', async () => {
    const { client, webhookId } = await subscriptionInPortal('typed rotation');
    const path = `/portal/subscriptions/${webhookId}`;
    const page = await client.get(path);
    const stateBefore = await webhookState(app.db);
    const assertShownOnce = (html: string, what: string): void => {
      assert.equal(html.match(/\sautofocus\b/g)?.length, 1, `${what}: one element takes the focus`);
      assert.doesNotMatch(html, /class="flash/, `${what}: nothing said at the top of the page`);
    };

    const unticked = await client.postFrom(page, `${path}/rotate-secret`, { graceSeconds: '0' });
    assert.equal(unticked.status, 400);
    assert.match(
      unticked.html,
      /<input id="grace-seconds"[^>]* value="0" maxlength="7"\s*>/,
      'the 0 is kept, not marked',
    );
    assert.match(
      unticked.html,
      /<input id="confirm-no-grace"[^>]*aria-invalid="true" aria-describedby="confirm-no-grace-error" autofocus>/,
    );
    assert.match(
      unticked.html,
      /<p id="confirm-no-grace-error" class="field-error">With 0 seconds the current secret stops signing at once/,
    );
    assertShownOnce(unticked.html, 'a grace of 0 without its box');

    for (const typed of ['abc', '-5', '999999999']) {
      const refused = await client.postFrom(page, `${path}/rotate-secret`, { graceSeconds: typed });
      assert.equal(refused.status, 400, typed);
      assert.match(
        refused.html,
        new RegExp(
          `<input id="grace-seconds"[^>]* value="${typed}" maxlength="7"\\s+aria-invalid="true" aria-describedby="grace-seconds-error" autofocus>`,
        ),
        typed,
      );
      assert.match(
        refused.html,
        /<p id="grace-seconds-error" class="field-error">Seconds the current secret keeps signing must be a whole number from 0 to 604800/,
        typed,
      );
      assert.doesNotMatch(
        refused.html,
        /id="confirm-no-grace"[^>]*aria-invalid/,
        `${typed}: the box is not what is wrong`,
      );
      assertShownOnce(refused.html, typed);
    }
    assert.equal(await webhookState(app.db), stateBefore, 'a refused rotation changes nothing');
    assert.doesNotMatch((await client.get(path)).html, /field-error/, 'the refusal is not left for a later page');
  });

  it('refuses a recovery window for what is wrong with the subscription or the link, not a field: at the top, as before', async () => {
    const readOnly = await subscriptionInPortal('read-only window', { readOnly: true });
    const shown = await readOnly.client.get(`/portal/subscriptions/${readOnly.webhookId}`);
    const refused = await readOnly.client.postFrom(shown, `/portal/subscriptions/${readOnly.webhookId}/recover`, {
      since: 'yesterday',
    });
    assert.equal(refused.status, 403);
    assert.match(refused.html, /read-only/);
    assert.doesNotMatch(refused.html, /field-error|aria-invalid/);

    const { client, webhookId } = await subscriptionInPortal('other account window');
    const own = await client.get(`/portal/subscriptions/${webhookId}`);
    const elsewhere = await client.postFrom(own, `/portal/subscriptions/${readOnly.webhookId}/recover`, {
      since: 'yesterday',
    });
    assert.equal(elsewhere.status, 404, "another account's subscription is not found, whatever was typed");
    const unknown = await client.postFrom(own, '/portal/subscriptions/wh_none/recover', { since: 'yesterday' });
    assert.equal(stable(unknown.html), stable(elsewhere.html));

    const withoutCsrf = await client.post(`/portal/subscriptions/${webhookId}/recover`, { since: 'yesterday' }, null);
    assert.equal(withoutCsrf.status, 403, 'a post without the form’s CSRF token is refused before its fields are read');
    assert.doesNotMatch(withoutCsrf.html, /field-error/);
  });

  it('refreshes the log together with the health figures and warnings above it, and says so in a polite status', async () => {
    const { client, webhookId } = await subscriptionInPortal('refreshed log');
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_fresh_', 3);
    const path = `/portal/subscriptions/${webhookId}`;
    const loaded = await client.get(path);
    const refresh = assertRefreshLinkShown(loaded.html);
    const target = /hx-select="#([^"]+)"/.exec(refresh)?.[1] ?? '';
    const replaced = new RegExp(`id="${target}"[\\s\\S]*`).exec(loaded.html)?.[0] ?? '';
    assert.ok(replaced !== '', `the refresh replaces an element of the page: ${target}`);
    assert.doesNotMatch(
      replaced,
      /id="log-status"|<form[^>]*\/recover"|<form[^>]*\/rotate-secret"/,
      'nor the status, nor a form with fields',
    );

    const refreshed = await client.get(path, { 'hx-request': 'true' });
    assert.equal(refreshed.status, 200);
    assertRefreshAnnounced(refreshed.html);
  });
});
