import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import type { Scope } from '../src/common/auth-context/access';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startTestService, type TestService } from './support/test-service';

const WEBHOOK_SCOPES: Scope[] = ['events:read', 'orders:read', 'webhooks:read', 'webhooks:write'];
const VENUE_WEBHOOK_SCOPES: Scope[] = ['events:read', 'webhooks:read', 'webhooks:write'];
const HOOK = 'https://hooks.example.com/events';

describe('webhook subscriptions', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let make: ReturnType<typeof fixtures>;

  before(async () => {
    // Production rules: no private range is exempted here; 8443 is allowed besides 443.
    service = await startTestService({ WEBHOOK_ALLOWED_PORTS: '443,8443' });
    api = publicApi(service);
    admin = internalApi(service);
    make = fixtures(service);
  });
  after(async () => service.close());

  const organiser = (): Promise<Organiser> => make.organiser({ scopes: WEBHOOK_SCOPES });
  const venue = (): Promise<Venue> => make.venue({ scopes: VENUE_WEBHOOK_SCOPES });
  const create = (key: string, body: unknown) => api('POST', '/v1/webhooks', { key, body });

  describe('creating', () => {
    let owner: Organiser;
    before(async () => {
      owner = await organiser();
    });

    it('answers 201 with exactly the Webhook shape, enabled, with a whsec_ secret', async () => {
      const result = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      assert.equal(result.status, 201, result.text);
      assert.deepEqual(Object.keys(result.body), ['data']);
      const webhook = result.body.data;
      assert.deepEqual(Object.keys(webhook), [
        'id',
        'url',
        'events',
        'secret',
        'enabled',
        'description',
        'lastStatus',
        'consecutiveFailures',
      ]);
      assert.match(webhook.id, /^whk_[0-9a-f]{24}$/);
      assert.equal(webhook.url, HOOK);
      assert.deepEqual(webhook.events, ['order.confirmed']);
      assert.match(webhook.secret, /^whsec_[0-9a-f]{64}$/);
      assert.equal(webhook.enabled, true);
      assert.equal(webhook.description, null);
      assert.equal(webhook.lastStatus, null);
      assert.equal(webhook.consecutiveFailures, 0);
    });

    it('marks responses that carry secrets as not to be stored by any cache', async () => {
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      assert.equal(created.headers.get('cache-control'), 'no-store');
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(listed.headers.get('cache-control'), 'no-store');
    });

    it('gives every subscription its own secret', async () => {
      const first = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      const second = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      assert.notEqual(first.body.data.secret, second.body.data.secret);
      for (const id of [first.body.data.id, second.body.data.id]) {
        assert.equal((await api('DELETE', `/v1/webhooks/${id}`, { key: owner.key })).status, 200);
      }
    });

    it('filters unknown event types out silently and collapses repeats', async () => {
      const result = await create(owner.key, {
        url: HOOK,
        events: ['order.refunded', 'event.published', 42, 'event.published', null, 'order.confirmed'],
      });
      assert.equal(result.status, 201, result.text);
      assert.deepEqual(result.body.data.events, ['event.published', 'order.confirmed']);
      await api('DELETE', `/v1/webhooks/${result.body.data.id}`, { key: owner.key });
    });

    it('refuses a list with no known event type with 400 invalid_argument', async () => {
      for (const events of [[], ['order.refunded'], ['ORDER.CONFIRMED', 'event_published'], [1, 2]]) {
        assertErrorBody(await create(owner.key, { url: HOOK, events }), 400, 'invalid_argument');
      }
    });

    it('refuses events that are missing or not an array with 400 invalid_argument', async () => {
      for (const body of [
        { url: HOOK },
        { url: HOOK, events: null },
        { url: HOOK, events: 'order.confirmed' },
        { url: HOOK, events: { 0: 'order.confirmed' } },
      ]) {
        assertErrorBody(await create(owner.key, body), 400, 'invalid_argument');
      }
    });

    it('refuses a request without a body with 400 invalid_argument', async () => {
      assertErrorBody(await api('POST', '/v1/webhooks', { key: owner.key }), 400, 'invalid_argument');
      assertErrorBody(await api('POST', '/v1/webhooks', { key: owner.key, body: {} }), 400, 'invalid_argument');
    });

    it('refuses a missing or non-string url with 400 invalid_argument', async () => {
      for (const body of [
        { events: ['order.confirmed'] },
        { url: null, events: ['order.confirmed'] },
        { url: 42, events: ['order.confirmed'] },
        { url: { href: HOOK }, events: ['order.confirmed'] },
        { url: '', events: ['order.confirmed'] },
      ]) {
        assertErrorBody(await create(owner.key, body), 400, 'invalid_argument');
      }
    });

    it('disables at creation only for the literal boolean false', async () => {
      const cases: Array<[unknown, boolean]> = [
        [false, false],
        [true, true],
        [0, true],
        ['false', true],
        [null, true],
        ['', true],
        [undefined, true],
      ];
      for (const [enabled, expected] of cases) {
        const body: Record<string, unknown> = { url: HOOK, events: ['order.confirmed'] };
        if (enabled !== undefined) body['enabled'] = enabled;
        const result = await create(owner.key, body);
        assert.equal(result.status, 201, result.text);
        assert.equal(result.body.data.enabled, expected, `enabled: ${JSON.stringify(enabled)}`);
        await api('DELETE', `/v1/webhooks/${result.body.data.id}`, { key: owner.key });
      }
    });

    it('trims the description and cuts it to 200 characters, never leaving spaces at the cut', async () => {
      const cases: Array<[unknown, string | null]> = [
        ['  Order feed  ', 'Order feed'],
        [`${'x'.repeat(198)}   y`, 'x'.repeat(198)],
        [`  ${'a'.repeat(250)}  `, 'a'.repeat(200)],
        [`${'é'.repeat(199)}🎟🎟`, `${'é'.repeat(199)}🎟`],
        ['   ', null],
        [null, null],
      ];
      for (const [description, expected] of cases) {
        const result = await create(owner.key, { url: HOOK, events: ['order.confirmed'], description });
        assert.equal(result.status, 201, result.text);
        assert.equal(result.body.data.description, expected);
        await api('DELETE', `/v1/webhooks/${result.body.data.id}`, { key: owner.key });
      }
    });

    it('refuses a description that is not a string with 400 invalid_argument', async () => {
      for (const description of [42, ['a'], { text: 'a' }, true]) {
        assertErrorBody(
          await create(owner.key, { url: HOOK, events: ['order.confirmed'], description }),
          400,
          'invalid_argument',
        );
      }
    });

    it('needs the webhooks:write scope to create and webhooks:read to list', async () => {
      const readOnly = await make.organiser({ scopes: ['events:read', 'webhooks:read'] });
      assertErrorBody(
        await create(readOnly.key, { url: HOOK, events: ['order.confirmed'] }),
        403,
        'insufficient_scope',
      );
      const writeOnly = await make.organiser({ scopes: ['events:read', 'webhooks:write'] });
      assertErrorBody(await api('GET', '/v1/webhooks', { key: writeOnly.key }), 403, 'insufficient_scope');
      assertErrorBody(await create('svc_live_nope', { url: HOOK, events: ['order.confirmed'] }), 401, 'unauthorized');
    });
  });

  describe('refused urls', () => {
    let owner: Organiser;
    before(async () => {
      owner = await organiser();
    });

    const refused: Array<[string, string]> = [
      ['plain http', 'http://hooks.example.com/in'],
      ['another scheme', 'ftp://hooks.example.com/in'],
      ['a relative url', '/webhooks/in'],
      ['no scheme', 'hooks.example.com/in'],
      ['credentials in the url', 'https://user:secret@hooks.example.com/in'],
      ['loopback', 'https://127.0.0.1/in'],
      ['loopback with a port', 'https://127.0.0.1:8443/in'],
      ['decimal-spelled loopback', 'https://2130706433/in'],
      ['hex-spelled loopback', 'https://0x7f.0.0.1/in'],
      ['short-form loopback', 'https://127.1/in'],
      ['IPv6 loopback', 'https://[::1]/in'],
      ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/in'],
      ['the unspecified address', 'https://0.0.0.0/in'],
      ['10/8', 'https://10.1.2.3/in'],
      ['172.16/12', 'https://172.16.0.10/in'],
      ['192.168/16', 'https://192.168.1.1/in'],
      ['carrier-grade NAT', 'https://100.64.1.1/in'],
      ['link-local', 'https://169.254.1.1/in'],
      ['cloud metadata (AWS, GCP, Azure)', 'https://169.254.169.254/latest/meta-data/'],
      ['AWS IPv6 metadata', 'https://[fd00:ec2::254]/'],
      ['IPv6 unique local', 'https://[fc00::1]/in'],
      ['IPv6 link-local', 'https://[fe80::1]/in'],
      ['multicast', 'https://224.0.0.1/in'],
      ['localhost', 'https://localhost/in'],
      ['a *.localhost name', 'https://hooks.localhost/in'],
      ['an mDNS *.local name', 'https://printer.local/in'],
      ['GCP metadata name', 'https://metadata.google.internal/computeMetadata/v1/'],
      ['a single-label intranet name', 'https://intranet/in'],
      ['not a url at all', 'not a url'],
      // SSRF gaps: every spelling of a private address.
      ['IPv4-translated loopback (::ffff:0:0:0/96)', 'https://[::ffff:0:127.0.0.1]/'],
      ['Teredo (2001::/32)', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/in'],
      ['2001::/23', 'https://[2001:1ff::1]/in'],
      ['a port outside WEBHOOK_ALLOWED_PORTS', 'https://hooks.example.com:22/in'],
      ['a fragment, never sent to a receiver', 'https://hooks.example.com/in#section'],
      ['port 0', 'https://hooks.example.com:0/in'],
    ];
    for (const [form, url] of refused) {
      it(`refuses ${form} (${url}) with 400 invalid_argument, naming no address`, async () => {
        const result = await create(owner.key, { url, events: ['order.confirmed'] });
        assertErrorBody(result, 400, 'invalid_argument');
        assert.doesNotMatch(result.body.message, /\d+\.\d+\.\d+|::/);
      });
    }

    it('stores and returns the normalised URL, not the raw text', async () => {
      const result = await create(owner.key, {
        url: ' HTTPS://Hooks.Example.COM:443/a/../in?x=1 ',
        events: ['order.confirmed'],
      });
      assert.equal(result.status, 201, result.text);
      assert.equal(result.body.data.url, 'https://hooks.example.com/in?x=1');
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(
        listed.body.data.find((w: { id: string }) => w.id === result.body.data.id).url,
        result.body.data.url,
      );
      await api('DELETE', `/v1/webhooks/${result.body.data.id}`, { key: owner.key });
    });

    it('holds the url to 2048 characters as stored: one that percent-encoding makes longer is 400 invalid_argument', async () => {
      // 2,033 characters as sent; each € becomes %E2%82%AC, 9 characters, when normalised.
      const url = `${HOOK}/${'€'.repeat(2_000)}`;
      assert.ok(url.length <= 2048);
      const result = await create(owner.key, { url, events: ['order.confirmed'] });
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /url must be at most 2048 characters once normalised/);
      const fits = await create(owner.key, { url: `${HOOK}/${'€'.repeat(200)}`, events: ['order.confirmed'] });
      assert.equal(fits.status, 201, fits.text);
      assert.equal(fits.body.data.url, `${HOOK}/${'%E2%82%AC'.repeat(200)}`);
      await api('DELETE', `/v1/webhooks/${fits.body.data.id}`, { key: owner.key });
    });

    it('accepts a public https url on a name or a public address', async () => {
      for (const url of ['https://hooks.example.org:8443/in?source=events', 'https://93.184.216.34/in']) {
        const result = await create(owner.key, { url, events: ['order.confirmed'] });
        assert.equal(result.status, 201, result.text);
        assert.equal(result.body.data.url, url);
        await api('DELETE', `/v1/webhooks/${result.body.data.id}`, { key: owner.key });
      }
    });
  });

  describe('venue keys', () => {
    let place: Venue;
    before(async () => {
      place = await venue();
    });

    it('lets a venue key subscribe to event.published', async () => {
      const result = await create(place.key, { url: HOOK, events: ['event.published'] });
      assert.equal(result.status, 201, result.text);
      assert.deepEqual(result.body.data.events, ['event.published']);
      const listed = await api('GET', '/v1/webhooks', { key: place.key });
      assert.deepEqual(
        listed.body.data.map((w: { id: string }) => w.id),
        [result.body.data.id],
      );
    });

    it('refuses a venue key asking for order.confirmed with 403 forbidden', async () => {
      assertErrorBody(await create(place.key, { url: HOOK, events: ['order.confirmed'] }), 403, 'forbidden');
    });

    it('refuses, rather than narrows, a venue request that mixes allowed and refused types', async () => {
      const before = await api('GET', '/v1/webhooks', { key: place.key });
      assertErrorBody(
        await create(place.key, { url: HOOK, events: ['event.published', 'order.confirmed'] }),
        403,
        'forbidden',
      );
      const after = await api('GET', '/v1/webhooks', { key: place.key });
      assert.equal(after.body.data.length, before.body.data.length);
    });
  });

  describe('the limit of ten per account', () => {
    it('answers the eleventh subscription with 409 limit_reached, and a deletion frees a slot', async () => {
      const owner = await organiser();
      const ids: string[] = [];
      for (let i = 0; i < 10; i += 1) {
        const result = await create(owner.key, { url: `${HOOK}/${i}`, events: ['order.confirmed'] });
        assert.equal(result.status, 201, result.text);
        ids.push(result.body.data.id);
      }
      assertErrorBody(await create(owner.key, { url: HOOK, events: ['order.confirmed'] }), 409, 'limit_reached');
      assert.equal((await api('DELETE', `/v1/webhooks/${ids[0]}`, { key: owner.key })).status, 200);
      assert.equal((await create(owner.key, { url: HOOK, events: ['order.confirmed'] })).status, 201);
    });

    it('holds under concurrent creates: exactly ten of fifteen racing requests succeed', async () => {
      const owner = await organiser();
      const results = await Promise.all(
        Array.from({ length: 15 }, (_, i) => create(owner.key, { url: `${HOOK}/${i}`, events: ['order.confirmed'] })),
      );
      const statuses = results.map((result) => result.status).sort();
      assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(5).fill(409)]);
      for (const refused of results.filter((result) => result.status === 409)) {
        assertErrorBody(refused, 409, 'limit_reached');
      }
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(listed.body.data.length, 10);
    });

    it('counts per account: every key of an account shares the ten, other accounts are unaffected', async () => {
      const owner = await organiser();
      const secondKey = await make.key({ type: 'organiser', id: owner.id }, WEBHOOK_SCOPES);
      for (let i = 0; i < 10; i += 1) {
        const key = i % 2 === 0 ? owner.key : secondKey;
        assert.equal((await create(key, { url: HOOK, events: ['order.confirmed'] })).status, 201);
      }
      assertErrorBody(await create(secondKey, { url: HOOK, events: ['order.confirmed'] }), 409, 'limit_reached');
      const other = await organiser();
      assert.equal((await create(other.key, { url: HOOK, events: ['order.confirmed'] })).status, 201);
    });
  });

  describe('listing', () => {
    it("answers a page envelope of the account's own subscriptions with plaintext secrets, oldest first", async () => {
      const owner = await organiser();
      const stranger = await organiser();
      await create(stranger.key, { url: HOOK, events: ['order.confirmed'] });
      const first = await create(owner.key, { url: `${HOOK}/1`, events: ['order.confirmed'], description: 'one' });
      const second = await create(owner.key, { url: `${HOOK}/2`, events: ['event.published'], enabled: false });
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(listed.status, 200);
      assert.deepEqual(Object.keys(listed.body).sort(), ['data', 'has_more', 'next_cursor']);
      assert.equal(listed.body.has_more, false);
      assert.equal(listed.body.next_cursor, null);
      assert.deepEqual(listed.body.data, [first.body.data, second.body.data]);
    });

    it('answers an empty page for an account without subscriptions', async () => {
      const owner = await organiser();
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.deepEqual(listed.body, { data: [], has_more: false, next_cursor: null });
    });

    it('refuses query parameters, paging ones included, with 400 unsupported_parameter', async () => {
      const owner = await organiser();
      assertErrorBody(await api('GET', '/v1/webhooks?limit=5', { key: owner.key }), 400, 'unsupported_parameter');
    });
  });

  describe('deleting', () => {
    it('answers {id, deleted: true} and the subscription is gone from the list', async () => {
      const owner = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      const deleted = await api('DELETE', `/v1/webhooks/${created.body.data.id}`, { key: owner.key });
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, { data: { id: created.body.data.id, deleted: true } });
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.deepEqual(listed.body.data, []);
      assertErrorBody(
        await api('DELETE', `/v1/webhooks/${created.body.data.id}`, { key: owner.key }),
        404,
        'not_found',
      );
    });

    it("answers another account's subscription id with 404 not_found and leaves it alone", async () => {
      const owner = await organiser();
      const stranger = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      assertErrorBody(
        await api('DELETE', `/v1/webhooks/${created.body.data.id}`, { key: stranger.key }),
        404,
        'not_found',
      );
      const place = await venue();
      assertErrorBody(
        await api('DELETE', `/v1/webhooks/${created.body.data.id}`, { key: place.key }),
        404,
        'not_found',
      );
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(listed.body.data.length, 1);
    });

    it('answers an unknown id with 404 not_found', async () => {
      const owner = await organiser();
      assertErrorBody(
        await api('DELETE', '/v1/webhooks/whk_000000000000000000000000', { key: owner.key }),
        404,
        'not_found',
      );
    });

    it('answers a DELETE without a webhookId with 400 invalid_argument', async () => {
      const owner = await organiser();
      assertErrorBody(await api('DELETE', '/v1/webhooks', { key: owner.key }), 400, 'invalid_argument');
    });
  });

  describe('reference', () => {
    it('documents the three webhook operations in the OpenAPI document', async () => {
      const document = await api('GET', '/openapi.json');
      assert.equal(document.status, 200);
      const paths = document.body.paths as Record<string, Record<string, unknown>>;
      assert.deepEqual(Object.keys(paths['/v1/webhooks'] ?? {}).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(paths['/v1/webhooks/{webhookId}'] ?? {}), ['delete']);
      assert.ok(!Object.keys(paths).some((path) => path.startsWith('/internal')));
    });
  });

  describe('secrets at rest', () => {
    it('never stores the plaintext secret: the subscription table does not contain it', async () => {
      const owner = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      const secret: string = created.body.data.secret;
      const client = new Client({ connectionString: service.databaseUrl });
      await client.connect();
      try {
        const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM webhook_subscription t`);
        assert.ok(rows.rows.length > 0);
        for (const { row } of rows.rows) {
          assert.ok(!row.includes(secret), 'plaintext secret found in webhook_subscription');
          assert.ok(!row.includes(secret.slice('whsec_'.length)), 'secret hex found in webhook_subscription');
        }
      } finally {
        await client.end();
      }
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(listed.body.data[0].secret, secret);
    });
  });

  describe('internal API', () => {
    it('re-enables a subscription with 200 and the Webhook, failures back to 0', async () => {
      const owner = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'], enabled: false });
      const enabled = await admin('POST', `/internal/webhooks/${created.body.data.id}/enable`);
      assert.equal(enabled.status, 200, enabled.text);
      assert.deepEqual(enabled.body.data, { ...created.body.data, enabled: true, consecutiveFailures: 0 });
    });

    it('lists no deliveries for a new subscription', async () => {
      const owner = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      const deliveries = await admin('GET', `/internal/webhooks/${created.body.data.id}/deliveries`);
      assert.equal(deliveries.status, 200);
      assert.deepEqual(deliveries.body, { data: [] });
    });

    it('answers an unknown webhook with 404 not_found, and a deleted one cannot be re-enabled', async () => {
      assertErrorBody(await admin('POST', '/internal/webhooks/whk_000000000000000000000000/enable'), 404, 'not_found');
      assertErrorBody(
        await admin('GET', '/internal/webhooks/whk_000000000000000000000000/deliveries'),
        404,
        'not_found',
      );
      const owner = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      await api('DELETE', `/v1/webhooks/${created.body.data.id}`, { key: owner.key });
      assertErrorBody(await admin('POST', `/internal/webhooks/${created.body.data.id}/enable`), 404, 'not_found');
    });

    it('is not reachable on the public listener', async () => {
      const owner = await organiser();
      const created = await create(owner.key, { url: HOOK, events: ['order.confirmed'] });
      const result = await api('POST', `/internal/webhooks/${created.body.data.id}/enable`, { key: owner.key });
      assertErrorBody(result, 404, 'not_found');
    });
  });
});
