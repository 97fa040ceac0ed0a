import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { Client } from 'pg';
import { generateApiKey, hashApiKey } from '../libs/keys/api-key-format';
import { KeyUsageRecorder } from '../src/identity/key-usage.recorder';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';
import { roomInRateWindow } from './support/rate-window';
import { readContractSections } from './support/contract-tables';
import { SCOPES, type Scope } from '../src/common/auth-context/access';

/** The scopes a venue key may hold (api-v1.md, Authentication 6). */
const VENUE_SCOPES: Scope[] = ['events:read', 'webhooks:read', 'webhooks:write'];

interface ScopedRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  scope: Scope;
  principals: string[];
}

/** Every route of api-v1.md's summary table that names a scope, read from the contract itself. */
function scopedRoutes(): ScopedRoute[] {
  const table = readContractSections()
    .flatMap((section) => section.tables)
    .find((candidate) => candidate.header.join('|') === 'Method|Path|Scope|Principals');
  assert.ok(table, "api-v1.md has the endpoints' summary table");
  const routes = table.rows
    .filter(([, , scope]) => !(scope ?? '').startsWith('none'))
    .map(([method, path, scope, principals]) => {
      assert.ok((SCOPES as readonly string[]).includes(scope ?? ''), `${method} ${path}: unknown scope ${scope}`);
      return {
        method: method as ScopedRoute['method'],
        path: path ?? '',
        scope: scope as Scope,
        principals: (principals ?? '').split(',').map((name) => name.trim()),
      };
    });
  assert.deepEqual(new Set(routes.map((route) => route.scope)), new Set(SCOPES), 'every scope guards some route');
  return routes;
}

describe('identity and access', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  let venue: Venue;

  const app = withApp();
  before(async () => {
    ({ service, api, admin, db } = app);
    organiser = await fixtures(service).organiser({
      scopes: ['events:read', 'orders:read', 'events:write', 'webhooks:read', 'webhooks:write'],
    });
    venue = await fixtures(service).venue({ scopes: ['events:read', 'webhooks:read'] });
  });

  describe('minting keys', () => {
    it('mints svc_live_ plus 48 lowercase hex, returned once with its prefix, principal and scopes', async () => {
      const minted = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'org_manager' },
      });
      assert.equal(minted.status, 201);
      const data = minted.body.data;
      assert.deepEqual(Object.keys(data).sort(), ['id', 'key', 'keyPrefix', 'principal', 'scopes']);
      assert.match(data.key, /^svc_live_[0-9a-f]{48}$/);
      assert.ok(data.key.startsWith(data.keyPrefix.replace('…', '')));
      assert.ok(data.keyPrefix.length < 20);
      assert.deepEqual(data.principal, { type: 'organiser', id: organiser.id });
    });

    it('gives an organiser key events:read and orders:read by default, and a venue key events:read', async () => {
      const forOrganiser = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'owner' },
      });
      assert.deepEqual(forOrganiser.body.data.scopes, ['events:read', 'orders:read']);
      const forVenue = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'venue', id: venue.id }, actorRole: 'owner' },
      });
      assert.deepEqual(forVenue.body.data.scopes, ['events:read']);
    });

    it('refuses to mint unless actorRole is owner or org_manager, writing nothing', async () => {
      const before = Number((await db.query('SELECT count(*) FROM api_key')).rows[0].count);
      for (const actorRole of ['member', 'viewer', 'OWNER']) {
        const result = await admin('POST', '/internal/keys', {
          body: { principal: { type: 'organiser', id: organiser.id }, actorRole },
        });
        assertErrorBody(result, 403, 'forbidden');
      }
      assert.equal(Number((await db.query('SELECT count(*) FROM api_key')).rows[0].count), before);
    });

    it('refuses professional principals, unknown principal ids, unknown scopes and venue keys with events:write or orders:read', async () => {
      const before = Number((await db.query('SELECT count(*) FROM api_key')).rows[0].count);
      const cases: Array<Record<string, unknown>> = [
        { principal: { type: 'professional', id: 'pro_1' } },
        { principal: { type: 'organiser', id: 'org_unknown' } },
        { principal: { type: 'venue', id: 'ven_unknown' } },
        { principal: { type: 'robot', id: organiser.id } },
        { principal: { type: 'organiser', id: organiser.id }, scopes: ['events:read', 'events:delete'] },
        { principal: { type: 'organiser', id: organiser.id }, scopes: 'events:read' },
        { principal: { type: 'organiser', id: organiser.id }, scopes: [] },
        { principal: { type: 'venue', id: venue.id }, scopes: ['events:write'] },
        { principal: { type: 'venue', id: venue.id }, scopes: ['events:read', 'orders:read'] },
        { principal: 'organiser' },
      ];
      for (const body of cases) {
        const result = await admin('POST', '/internal/keys', { body: { ...body, actorRole: 'owner' } });
        assertErrorBody(result, 400, 'invalid_argument');
      }
      assert.equal(Number((await db.query('SELECT count(*) FROM api_key')).rows[0].count), before);
    });

    it('names one problem per field of an internal body: a missing name is required, not also too long and not a string', async () => {
      const missing = await admin('POST', '/internal/organisers', { body: {} });
      assertErrorBody(missing, 400, 'invalid_argument');
      assert.equal(missing.body.message, 'name is required and must not be empty.');
      const wrongKind = await admin('POST', '/internal/organisers', { body: { name: 42 } });
      assertErrorBody(wrongKind, 400, 'invalid_argument');
      assert.equal(wrongKind.body.message, 'name must be a string.');
      const tooLong = await admin('POST', '/internal/organisers', { body: { name: 'x'.repeat(501) } });
      assert.match(tooLong.body.message, /^name must be shorter than or equal to 500 characters\.$/);
    });

    it('stores no plaintext key anywhere in the database', async () => {
      const key = await fixtures(service).key({ type: 'organiser', id: organiser.id });
      const randomPart = key.slice('svc_live_'.length, 'svc_live_'.length + 40);
      const tables = await db.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
      assert.ok(tables.rows.length >= 3);
      for (const { table_name: table } of tables.rows as Array<{ table_name: string }>) {
        const rows = await db.query(`SELECT * FROM "${table}"`);
        const dump = JSON.stringify(rows.rows);
        assert.ok(!dump.includes(randomPart), `table ${table} holds the key`);
      }
    });
  });

  describe('authentication', () => {
    it('answers every malformed, unknown or missing key with the identical 401', async () => {
      const valid = organiser.key;
      const unknownButWellFormed = await fixtures(service).key({ type: 'organiser', id: organiser.id });
      await admin(
        'DELETE',
        `/internal/keys/${(await db.query('SELECT id FROM api_key ORDER BY created_at DESC LIMIT 1')).rows[0].id}`,
      );
      const forms: Array<Record<string, string>> = [
        {},
        { authorization: '' },
        { authorization: `Basic ${valid}` },
        { authorization: 'Bearer' },
        { authorization: `Bearer  ${valid}` },
        { authorization: `Bearer ${valid},other` },
        { authorization: `Bearer ${valid}x` },
        { authorization: `Bearer x${valid}` },
        { authorization: `Bearer ${valid.slice(0, -1)}` },
        { authorization: `Bearer ${valid.replace('svc_live_', 'svc_test_')}` },
        { authorization: `Bearer ${valid.toUpperCase()}` },
        { authorization: `Bearer ${valid.slice(0, -1)}g` },
        { authorization: `Bearer ${valid.slice(0, -1)}${valid.endsWith('0') ? '1' : '0'}` },
        { authorization: `Bearer ${unknownButWellFormed}` },
        { authorization: `Token ${valid}` },
      ];
      const bodies = new Set<string>();
      for (const headers of forms) {
        const result = await api('GET', '/v1/me', { headers });
        assertErrorBody(result, 401, 'unauthorized');
        bodies.add(JSON.stringify({ ...result.body, request_id: null }));
      }
      assert.equal(bodies.size, 1);
    });

    it("names the Bearer scheme in WWW-Authenticate on every 401, with its listener's realm", async () => {
      const forms: Array<Record<string, string>> = [
        {},
        { authorization: `Bearer ${organiser.key}x` },
        { authorization: 'Basic abc' },
      ];
      for (const headers of forms) {
        const refused = await api('GET', '/v1/events', { headers });
        assertErrorBody(refused, 401, 'unauthorized');
        assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="events-api"');
      }
      const internal = await admin('GET', '/internal/instances', { token: 'not-the-admin-token' });
      assertErrorBody(internal, 401, 'unauthorized');
      assert.equal(internal.headers.get('www-authenticate'), 'Bearer realm="events-api-internal"');
      const served = await api('GET', '/v1/events', { key: organiser.key });
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('www-authenticate'), null, 'only a 401 carries the challenge');
    });

    it('records when a key was last used, in batches rather than a write per request', async () => {
      const minted = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'owner' },
      });
      const { id, key } = minted.body.data as { id: string; key: string };
      const lastUsed = async () =>
        (await db.query('SELECT last_used_at FROM api_key WHERE id = $1', [id])).rows[0].last_used_at;
      const recorder = service.running.app.get(KeyUsageRecorder);
      // The recorder's 30-second timer is held while the request is made, so only the request itself could write.
      service.running.app.get(SchedulerRegistry).deleteInterval('api-key-last-used-flush');
      try {
        await api('GET', '/v1/me', { key });
        assert.equal(await lastUsed(), null, 'not written on the request path');
      } finally {
        recorder.onModuleInit();
      }
      await recorder.flush();
      const recorded = (await lastUsed()) as Date;
      assert.ok(Math.abs(recorded.getTime() - Date.now()) < 60_000);
    });

    it('refuses a revoked key from the very next request', async () => {
      const minted = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'owner' },
      });
      const { id, key } = minted.body.data as { id: string; key: string };
      assert.equal((await api('GET', '/v1/me', { key })).status, 200);
      const revoked = await admin('DELETE', `/internal/keys/${id}`);
      assert.deepEqual(revoked.body.data, { id, revoked: true });
      assertErrorBody(await api('GET', '/v1/me', { key }), 401, 'unauthorized');
    });

    it('validates the revoke body: an actorRole that is not a string is 400, and the key stays live', async () => {
      const minted = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'owner' },
      });
      const refused = await admin('DELETE', `/internal/keys/${minted.body.data.id}`, { body: { actorRole: 5 } });
      assertErrorBody(refused, 400, 'invalid_argument');
      assert.equal((await api('GET', '/v1/me', { key: minted.body.data.key })).status, 200);
    });

    it('answers revoking an unknown key with 404, and refuses a non-manager actorRole', async () => {
      assertErrorBody(await admin('DELETE', '/internal/keys/key_unknown'), 404, 'not_found');
      const minted = await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'owner' },
      });
      const refused = await admin('DELETE', `/internal/keys/${minted.body.data.id}`, { body: { actorRole: 'viewer' } });
      assertErrorBody(refused, 403, 'forbidden');
      assert.equal((await api('GET', '/v1/me', { key: minted.body.data.key })).status, 200);
    });
  });

  describe('authorisation', () => {
    it('refuses a valid key without the required scope with 403 insufficient_scope', async () => {
      const ordersOnly = await fixtures(service).key({ type: 'organiser', id: organiser.id }, ['orders:read']);
      assertErrorBody(await api('GET', '/v1/events', { key: ordersOnly }), 403, 'insufficient_scope');
    });

    it("needs each scoped route's own scope: a key with every other scope gets 403 insufficient_scope and writes nothing, the full key is served", async () => {
      const make = fixtures(service);
      const owner = await make.organiser({ scopes: [...SCOPES] });
      const place = await make.venue({ scopes: VENUE_SCOPES });
      let idempotencyKeys = 0;
      /** A request the route would serve and, for a write, act on: real ids of the caller's own rows, a valid body. */
      const requestFor = async (route: ScopedRoute, principal: { type: string; id: string; key: string }) => {
        let path = route.path;
        if (path.includes('{eventId}')) path = path.replace('{eventId}', (await make.event(owner.id)).id);
        if (path.includes('{webhookId}')) {
          path = path.replace('{webhookId}', (await make.webhook(principal.key, 'https://hooks.example.com/in')).id);
        }
        const bodies: Record<string, unknown> = {
          'POST /v1/events': { title: { EN: 'Scoped' }, startTime: '2030-03-01T18:00:00Z' },
          'PATCH /v1/events/{eventId}': { title: { EN: 'Renamed' } },
          'POST /v1/webhooks': { url: 'https://hooks.example.com/new', events: ['event.published'] },
        };
        const body = bodies[`${route.method} ${route.path}`];
        assert.ok(
          route.method === 'GET' || route.method === 'DELETE' || body !== undefined,
          `a body for ${route.path}`,
        );
        return (key: string) => {
          idempotencyKeys += 1;
          return api(route.method, path, {
            key,
            body,
            headers: route.method === 'POST' ? { 'idempotency-key': `scoped-${idempotencyKeys}` } : {},
          });
        };
      };
      const stored = async () =>
        JSON.stringify(
          (
            await db.query(
              `SELECT (SELECT json_agg(e ORDER BY e.id) FROM event e) AS events,
                      (SELECT json_agg(w ORDER BY w.id) FROM webhook_subscription w) AS webhooks,
                      (SELECT json_agg(k ORDER BY k.organizer_id, k.key) FROM idempotency_key k) AS idempotency`,
            )
          ).rows[0],
        );

      for (const route of scopedRoutes()) {
        const principal = route.principals.includes('organiser')
          ? { type: 'organiser', id: owner.id, key: owner.key, scopes: [...SCOPES] }
          : { type: 'venue', id: place.id, key: place.key, scopes: VENUE_SCOPES };
        const allButOne = principal.scopes.filter((scope) => scope !== route.scope);
        const lacking = await make.key({ type: principal.type, id: principal.id }, allButOne);
        const send = await requestFor(route, principal);
        const name = `${route.method} ${route.path} without ${route.scope}`;

        const before = await stored();
        assertErrorBody(await send(lacking), 403, 'insufficient_scope');
        assert.equal(await stored(), before, `${name} changed nothing`);

        const served = await send(principal.key);
        assert.ok(
          served.status >= 200 && served.status < 300,
          `${route.method} ${route.path} with ${route.scope}: ${served.status} ${served.text}`,
        );
        if (route.method !== 'GET')
          assert.notEqual(await stored(), before, `${route.method} ${route.path} with ${route.scope} writes`);
      }
    });

    it('serves a professional key (which only a database write can make) /v1 and /v1/me, and refuses it elsewhere without crashing', async () => {
      const key = generateApiKey();
      await db.query(
        `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role)
         VALUES ('key_professional', $1, 'svc_live_prof…', 'professional', 'pro_1',
                 '{events:read,orders:read,events:write,webhooks:read,webhooks:write}', 'owner')`,
        [hashApiKey(key)],
      );
      assert.equal((await api('GET', '/v1', { key })).status, 200);
      const me = await api('GET', '/v1/me', { key });
      assert.deepEqual(me.body.data.principal, { type: 'professional', id: 'pro_1' });
      assert.equal(me.body.data.organizerId, null);
      for (const [method, path] of [
        ['GET', '/v1/events'],
        ['GET', '/v1/events/evt_x'],
        ['PATCH', '/v1/events/evt_x'],
        ['GET', '/v1/events/evt_x/orders'],
        ['GET', '/v1/orders'],
        ['GET', '/v1/venues'],
        ['GET', '/v1/webhooks'],
        ['POST', '/v1/webhooks'],
        ['DELETE', '/v1/webhooks/whk_x'],
      ] as const) {
        assertErrorBody(
          await api(method, path, { key, body: method === 'GET' ? undefined : {} }),
          403,
          'insufficient_scope',
        );
      }
    });

    it('refuses a principal type the route does not serve with 403 insufficient_scope', async () => {
      assertErrorBody(await api('GET', '/v1/venues', { key: organiser.key }), 403, 'insufficient_scope');
      assertErrorBody(
        await api('POST', '/v1/events', { key: venue.key, body: {}, headers: { 'idempotency-key': 'k' } }),
        403,
        'insufficient_scope',
      );
    });
  });

  describe('GET /v1 and GET /v1/me', () => {
    it('describes the API to an organiser key with every member of the contract', async () => {
      const result = await api('GET', '/v1', { key: organiser.key });
      assert.equal(result.status, 200);
      const body = result.body;
      assert.equal(typeof body.api, 'string');
      assert.equal(body.version, 'v1');
      assert.equal(body.organizerId, organiser.id);
      assert.deepEqual(body.scopes, ['events:read', 'orders:read', 'events:write', 'webhooks:read', 'webhooks:write']);
      assert.equal(typeof body.endpoints, 'object');
      assert.ok(Object.values(body.endpoints).every((value) => typeof value === 'string'));
      assert.ok(Object.keys(body.endpoints).includes('GET /v1/events/{eventId}'));
      assert.ok(Object.keys(body.endpoints).includes('PATCH /v1/events/{eventId}'));
      assert.ok(!Object.keys(body.endpoints).some((route) => route.includes('/internal')));
      assert.deepEqual(body.events_available, ['order.confirmed', 'event.published']);
      assert.equal(typeof body.auth, 'string');
      assert.deepEqual(body.pagination, {
        style: 'cursor',
        parameters: ['limit', 'cursor', 'updated_after'],
        maxLimit: 100,
        defaultLimit: 50,
        envelope: ['data', 'has_more', 'next_cursor'],
      });
      assert.equal(typeof body.filters.updated_after, 'string');
      assert.match(body.rateLimits.reads, /^600 /);
      assert.match(body.rateLimits.writes, /^120 /);
      assert.ok(body.rateLimits.writeMethods.includes('DELETE'));
      assert.ok(Array.isArray(body.rateLimits.headers));
      assert.match(body.rateLimits.scope, /account/);
      assert.equal(body.requestId, result.headers.get('x-request-id'));
      assert.equal(body.docs, 'https://events.example.test/docs');
      const { data, ...topLevel } = body;
      assert.deepEqual(data, topLevel, 'data mirrors the top-level members');
    });

    it('describes the API to a venue key, with only event.published available', async () => {
      const result = await api('GET', '/v1', { key: venue.key });
      assert.equal(result.status, 200);
      assert.equal(typeof result.body.organizerId, 'string');
      assert.deepEqual(result.body.events_available, ['event.published']);
      assert.deepEqual(result.body.scopes, ['events:read', 'webhooks:read']);
    });

    it('reports the principal, scopes and key prefix on /v1/me, with organizerId null for a venue', async () => {
      const mine = await api('GET', '/v1/me', { key: organiser.key });
      assert.deepEqual(Object.keys(mine.body.data).sort(), [
        'apiVersion',
        'keyPrefix',
        'organizerId',
        'principal',
        'scopes',
      ]);
      assert.deepEqual(mine.body.data.principal, { type: 'organiser', id: organiser.id });
      assert.equal(mine.body.data.organizerId, organiser.id);
      assert.equal(mine.body.data.apiVersion, 'v1');
      assert.ok(organiser.key.startsWith(mine.body.data.keyPrefix.replace('…', '')));
      const theirs = await api('GET', '/v1/me', { key: venue.key });
      assert.deepEqual(theirs.body.data.principal, { type: 'venue', id: venue.id });
      assert.equal(theirs.body.data.organizerId, null);
    });
  });
});

describe('per-account rate limits', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let organiser: Organiser;

  const app = withApp({ RATE_LIMIT_READS: '5', RATE_LIMIT_WRITES: '2' });
  before(async () => {
    await roomInRateWindow();
    ({ service, api } = app);
    organiser = await fixtures(service).organiser({ scopes: ['events:read', 'webhooks:read', 'webhooks:write'] });
  });

  it('makes every key of an account draw on one budget, and leaves other accounts alone', async () => {
    const second = await fixtures(service).key({ type: 'organiser', id: organiser.id }, ['events:read']);
    const bystander = await fixtures(service).organiser();
    const statuses: number[] = [];
    for (const key of [organiser.key, second, organiser.key, second, organiser.key, second, organiser.key]) {
      statuses.push((await api('GET', '/v1/me', { key })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    assert.equal((await api('GET', '/v1/me', { key: bystander.key })).status, 200);
  });

  it('counts DELETE as a write, and writes against their own budget', async () => {
    const writer = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const first = await api('DELETE', '/v1/webhooks/whk_missing', { key: writer.key });
    const second = await api('DELETE', '/v1/webhooks/whk_missing', { key: writer.key });
    assert.notEqual(first.status, 429);
    assert.notEqual(second.status, 429);
    assertErrorBody(await api('DELETE', '/v1/webhooks/whk_missing', { key: writer.key }), 429, 'rate_limited');
    assert.equal((await api('GET', '/v1/me', { key: writer.key })).status, 200, 'reads have their own budget');
  });

  it('answers 429 rate_limited with integer, consistent Retry-After and X-RateLimit headers', async () => {
    const reader = await fixtures(service).organiser();
    let limited;
    for (let i = 0; i < 7 && limited === undefined; i += 1) {
      const result = await api('GET', '/v1/me', { key: reader.key });
      if (result.status === 429) limited = result;
    }
    assert.ok(limited, 'the budget of 5 ran out');
    assertErrorBody(limited, 429, 'rate_limited');
    const header = (name: string): string => limited.headers.get(name) ?? '';
    for (const name of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      assert.match(header(name), /^\d+$/, name);
    }
    assert.equal(header('x-ratelimit-limit'), '5');
    assert.equal(header('x-ratelimit-remaining'), '0');
    const retryAfter = Number(header('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60);
    const now = Math.floor(Date.now() / 1000);
    assert.ok(Math.abs(Number(header('x-ratelimit-reset')) - (now + retryAfter)) <= 1);
    assert.equal(Number(header('x-ratelimit-reset')) % 60, 0, 'windows are aligned to the minute');
  });

  it('counts a write whose body is refused as it is read (malformed JSON, a type that is not JSON) against the account, with the budget’s headers, and answers 429 once the budget is spent', async () => {
    const writer = await fixtures(service).organiser({ scopes: ['events:read', 'events:write'] });
    const post = (options: { rawBody: string; headers: Record<string, string> }) =>
      api('POST', '/v1/events', {
        key: writer.key,
        ...options,
        headers: { 'idempotency-key': `budget-${Math.random()}`, ...options.headers },
      });
    const malformed = await post({ rawBody: '{', headers: { 'content-type': 'application/json' } });
    assertErrorBody(malformed, 400, 'invalid_argument');
    assert.equal(malformed.headers.get('x-ratelimit-limit'), '2');
    assert.equal(malformed.headers.get('x-ratelimit-remaining'), '1');
    const notJson = await post({ rawBody: 'title=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(notJson.status, 415);
    assert.equal(notJson.headers.get('x-ratelimit-remaining'), '0');
    const spent = await post({ rawBody: '{', headers: { 'content-type': 'application/json' } });
    assertErrorBody(spent, 429, 'rate_limited');
    assert.match(spent.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal((await api('GET', '/v1/me', { key: writer.key })).status, 200, 'reads have their own budget');
  });

  it('sends the X-RateLimit headers on successful responses too', async () => {
    const reader = await fixtures(service).organiser();
    const result = await api('GET', '/v1/me', { key: reader.key });
    assert.equal(result.headers.get('x-ratelimit-limit'), '5');
    assert.equal(result.headers.get('x-ratelimit-remaining'), '4');
    assert.match(result.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
  });
});
