import fc from 'fast-check';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { RouteTable } from '../src/common/http/route-table';
import { DashboardClient, csrfOf } from './support/dashboard-client';
import { roundTrip } from './support/http-client';
import { mintPortalLink, PortalClient } from './support/portal-client';
import { changedTables, TableSnapshots } from './support/table-snapshot';
import { insertFailedHistoryDeliveries } from './support/webhook-rows';
import { withApp } from './support/with-app';

/**
 * The API's fuzzing (fuzz.e2e-spec.ts) sends bearer credentials, which the dashboard's and the portal's
 * forms refuse before reading anything. Here the forms are posted as a signed-in person's browser
 * would post them, with a live session and its CSRF token, so every field reader, form check and
 * handler behind them sees hostile values: none may answer 5xx, a refusal (4xx) writes nothing, and
 * the session survives.
 */

/**
 * Written whatever a signed-in request answers (the sessions' last use and flashes), or by the delivery
 * worker that a resend or a recovery wakes (its lease lists, a failing subscription's warnings and
 * figures), beside what every snapshot leaves out.
 */
const WRITTEN_BESIDE_THE_REQUEST = {
  tables: ['dashboard_session', 'portal_session', 'webhook_delivery_flight', 'webhook_warning'],
  columns: { webhook_subscription: ['disabled_at', 'last_success_at', 'last_failure_at', 'alert_open'] },
};

/** Every name a form of the dashboard or the portal reads, and a few no form has. */
const FIELD_NAMES = [
  'actorRole',
  'address',
  'attributionSource',
  'before',
  'billingEmail',
  'billingName',
  'city',
  'confirm',
  'confirmNoGrace',
  'country',
  'currency',
  'cursor',
  'displayName',
  'eventId',
  'force',
  'graceSeconds',
  'name',
  'next',
  'placeholder',
  'quantity',
  'readOnly',
  'recover',
  'scopes',
  'since',
  'startTime',
  'status',
  'timeZone',
  'title',
  'token',
  'totalAmountMinor',
  'ttlSeconds',
  'unitAmountMinor',
  'until',
  'visibility',
  '__proto__',
  'constructor',
  'title[en]',
  'lineItems.0.quantity',
];

const hostileText = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1e309',
    '9007199254740993',
    'NaN',
    'true',
    'null',
    '[]',
    '{}',
    '2026-02-30T25:61:00Z',
    '-271821-04-20T00:00:00Z',
    '0001-01-01',
    '/internal/dashboard/accounts',
    '//evil.example/x',
    'https://evil.example/',
    '../../internal/keys',
    'owner',
    'events:read',
    'draft',
    'public',
    'confirmed',
    'EUR',
    'eur',
    'Europe/Berlin',
    'Mars/Olympus',
    'x'.repeat(5_000),
    '\u0000',
    '\uFFFD',
    '😀'.repeat(300),
    '<script>alert(1)</script>',
    '%',
    '%FF',
  ),
  fc.string({ maxLength: 40 }),
  fc.integer().map(String),
);

/** A urlencoded body as a browser would send it, or not quite: repeated names, raw bytes, no `=`. */
function formBody(csrf: string): fc.Arbitrary<{ body: string; contentType: string; htmx: boolean }> {
  const pair = fc.tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...FIELD_NAMES) }, fc.string()), hostileText);
  return fc
    .record({
      pairs: fc.array(pair, { maxLength: 8 }),
      raw: fc.option(fc.constantFrom('%', '%FF%FE', '=&=&', 'a', '&&&', 'title=%E0%A4%A', 'x[]=1&x[a]=2'), {
        freq: 5,
      }),
      withCsrf: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      htmx: fc.boolean(),
      contentType: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/x-www-form-urlencoded') },
        fc.constantFrom(
          'application/x-www-form-urlencoded; charset=latin1',
          'application/json',
          'text/plain',
          'multipart/form-data; boundary=x',
        ),
      ),
    })
    .map(({ pairs, raw, withCsrf, htmx, contentType }) => {
      const form = new URLSearchParams();
      for (const [name, value] of pairs) form.append(name, value);
      if (withCsrf) form.set('_csrf', csrf);
      const body = raw === null ? form.toString() : `${form.toString()}&${raw}`;
      return { body, contentType, htmx };
    });
}

describe('signed-in forms of the dashboard and the portal: hostile values never answer 5xx, and a refusal writes nothing', () => {
  const app = withApp({
    WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
    RATE_LIMIT_FAILURES_PER_CLIENT: '0',
    RATE_LIMIT_READS: '100000',
    RATE_LIMIT_WRITES: '100000',
    // No delivery is attempted while the forms are posted: the log's rows stay as inserted.
    WEBHOOK_POLL_MS: '3600000',
  });
  const ids: Record<string, string[]> = {};

  before(async () => {
    const organiser = await app.make.organiser({ scopes: ['events:read', 'webhooks:read', 'webhooks:write'] });
    const venue = await app.make.venue({ locations: 1 });
    const event = await app.make.event(organiser.id);
    const order = await app.make.order(event.id);
    const { id: webhookId } = await app.make.webhook(organiser.key, 'https://127.0.0.1:9/hooks', ['order.confirmed']);
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_fuzz_', 3);
    const keys = await app.db.query<{ id: string }>(`SELECT id FROM api_key LIMIT 1`);
    const locations = await app.db.query<{ id: string }>(`SELECT id FROM venue_location LIMIT 1`);
    const known = (value: string | undefined): string[] => (value === undefined ? [] : [value]);
    ids['organiserId'] = [organiser.id];
    ids['accountId'] = [organiser.id, venue.id];
    ids['accountKind'] = ['organisers', 'venues', 'professionals'];
    ids['venueId'] = [venue.id];
    ids['eventId'] = [event.id];
    ids['orderId'] = [order.id];
    ids['webhookId'] = [webhookId];
    ids['deliveryId'] = ['dlv_fuzz_0001', 'dlv_fuzz_0002'];
    ids['keyId'] = known(keys.rows[0]?.id);
    ids['locationId'] = known(locations.rows[0]?.id);
  });

  /** Every POST route of one listener under `prefix`, its parameters filled with an id of the right kind or not. */
  function postTargets(listener: 'public' | 'admin', prefix: string, skip: RegExp): fc.Arbitrary<string> {
    const routes = app.service.running.app
      .get(RouteTable)
      .entries(listener)
      .filter((route) => route.method === 'POST' && route.path.startsWith(prefix) && !skip.test(route.path));
    assert.ok(routes.length >= 4, `only ${routes.length} POST routes under ${prefix}`);
    return fc.constantFrom(...routes).chain((route) => {
      const names = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1] ?? '');
      const values = names.map((name) =>
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...(ids[name] ?? ['x'])) },
          { weight: 1, arbitrary: fc.constantFrom(randomUUID(), 'x', '%00', '..', 'org_' + 'a'.repeat(300)) },
        ),
      );
      return fc.tuple(...values).map((filled) => {
        let at = 0;
        return route.path.replace(/:[A-Za-z]+/g, () => filled[at++] ?? '');
      });
    });
  }

  async function postAll(
    base: string,
    cookies: () => string,
    csrf: string,
    targets: fc.Arbitrary<string>,
    stillSignedIn: () => Promise<boolean>,
  ): Promise<void> {
    const snapshots = await TableSnapshots.of(app.db, WRITTEN_BESIDE_THE_REQUEST);
    await fc.assert(
      fc.asyncProperty(targets, formBody(csrf), async (path, { body, contentType, htmx }) => {
        const before = await snapshots.latest();
        const answer = await roundTrip(
          `${base}${path}`,
          'POST',
          { 'content-type': contentType, cookie: cookies(), ...(htmx ? { 'hx-request': 'true' } : {}) },
          body,
        );
        assert.ok(
          answer.status < 500,
          `POST ${path} ${contentType}${htmx ? ' (htmx)' : ''} ${body.slice(0, 300)}: ${answer.status}`,
        );
        const changed = changedTables(before, await snapshots.take());
        if (answer.status >= 400) {
          assert.deepEqual(
            changed,
            [],
            `POST ${path} ${body.slice(0, 300)} answered ${answer.status} but changed ${changed.join(', ')}`,
          );
        }
      }),
      { numRuns: 250, includeErrorInReport: true },
    );
    assert.ok(await stillSignedIn(), 'the session survives hostile forms');
  }

  it('the dashboard answers every signed-in form with hostile values without a 5xx, writing nothing when it refuses', async () => {
    const client = new DashboardClient(app.service.adminUrl);
    const csrf = await client.signIn(app.service.adminToken);
    const cookies = (): string => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    await postAll(
      app.service.adminUrl,
      cookies,
      csrf,
      // Signing out would end the session the rest of the run posts with; a deletion, the rows the rest posts to.
      postTargets('admin', '/internal/dashboard', /\/(?:sign-out|sign-in|delete)$/),
      async () => (await client.get('/internal/dashboard/accounts')).status === 200,
    );
  });

  it('the portal answers every signed-in form with hostile values without a 5xx, writing nothing when it refuses', async () => {
    const organiserId = ids['organiserId']?.[0] ?? '';
    const client = new PortalClient(app.service.publicUrl);
    await client.open((await mintPortalLink(app.service, organiserId, {})).token);
    const csrf = csrfOf((await client.get('/portal/subscriptions')).html);
    const cookies = (): string => [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    await postAll(
      app.service.publicUrl,
      cookies,
      csrf,
      postTargets('public', '/portal', /\/(?:sign-out|session)$/),
      async () => (await client.get('/portal/subscriptions')).status === 200,
    );
  });
});
