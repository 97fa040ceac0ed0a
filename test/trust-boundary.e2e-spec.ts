import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { NO_PAGE_HERE } from '../src/common/html/html-sections';
import { RouteTable } from '../src/common/http/route-table';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { sendRawBytes } from './support/raw-bytes';
import { rawRequest, type RawResult } from './support/raw-request';
import { startTestService, type TestService } from './support/test-service';
import { nth } from './support/defined';
import { withApp } from './support/with-app';
import { roomInRateWindow } from './support/rate-window';
import { eventually } from './support/eventually';
import { generateApiKey } from '../libs/keys/api-key-format';

/** Open dashboard routes: the sign-in form itself and the assets it needs. */
const OPEN_DASHBOARD_ROUTES = [
  '/internal/dashboard',
  '/internal/dashboard/sign-in',
  '/internal/dashboard/assets/:name',
];

/** Open portal routes: the page a link opens, the token exchange, the pages that need no session, the assets. */
const OPEN_PORTAL_ROUTES = [
  '/portal',
  '/portal/session',
  '/portal/link-refused',
  '/portal/signed-out',
  '/portal/assets/:name',
];

/**
 * The one credential a route accepts (mirrors src/common/http/listener.ts, the dashboard's @DashboardRoute and
 * the portal's @PortalRoute): `session` is a dashboard or portal session, which none of the credentials tried has.
 */
function credentialOf(path: string): 'apiKey' | 'adminToken' | 'session' | 'none' {
  if (OPEN_DASHBOARD_ROUTES.includes(path) || OPEN_PORTAL_ROUTES.includes(path)) return 'none';
  if (path.startsWith('/internal/dashboard') || path === '/portal' || path.startsWith('/portal/')) return 'session';
  if (path.startsWith('/internal')) return 'adminToken';
  const open = ['/healthz', '/readyz', '/openapi.json', '/openapi.yaml'].includes(path) || path.startsWith('/docs');
  return open ? 'none' : 'apiKey';
}

/** A route miss: 404 from the router's decision (not a handler's), 405, or a URL the router refused. */
function isRouteMiss(result: RawResult): boolean {
  if (result.status === 405 || result.status === 400 || result.status === 414) return true;
  if (result.status !== 404) return false;
  // Under the dashboard's and the portal's paths a route miss is the section's HTML page, in people's words.
  if (result.text.includes(`<p class="warning" role="alert">${NO_PAGE_HERE}</p>`)) return true;
  if (result.text.includes(`<p class="flash flash-error" role="alert">${NO_PAGE_HERE}</p>`)) return true;
  return typeof result.body?.message === 'string' && result.body.message.startsWith('No resource at');
}

/**
 * `/readyz` answers 503 when a check misses its 800 ms timeout, which a
 * loaded test machine can cause: that is the probe's answer, not a handler
 * failure, and says nothing about which listener or credential it accepts.
 */
function isReadinessAnswer(path: string, status: number): boolean {
  return path === '/readyz' && (status === 200 || status === 503);
}

function sameOutcome(path: string, getStatus: number, headStatus: number): boolean {
  return getStatus === headStatus || (isReadinessAnswer(path, getStatus) && isReadinessAnswer(path, headStatus));
}

async function count(db: Client, table: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(rows[0]?.n);
}

describe('trust boundary: the internal API never answers on the public listener', () => {
  let service: TestService;
  let db: Client;
  let reader: Organiser;
  let victim: Organiser;
  let victimSubscriber: Organiser;

  const app = withApp({ RATE_LIMIT_FAILURES_PER_CLIENT: '0' });
  before(async () => {
    ({ service, db } = app);
    reader = await fixtures(service).organiser({ scopes: ['events:read'] });
    victim = await fixtures(service).organiser();
    victimSubscriber = await fixtures(service).organiser({ scopes: ['webhooks:write'] });
  });

  it('refuses POST /%69nternal/keys with a valid API key: no key is minted for another organiser', async () => {
    const before = await count(db, 'api_key');
    const result = await rawRequest(service.publicUrl, 'POST', '/%69nternal/keys', {
      headers: { authorization: `Bearer ${reader.key}` },
      body: JSON.stringify({ principal: { type: 'organiser', id: victim.id }, actorRole: 'owner' }),
    });
    assert.equal(result.status, 404, result.text);
    assert.equal(await count(db, 'api_key'), before);
  });

  it("refuses POST /intern%61l/events/{id}/publish: another tenant's event stays unpublished", async () => {
    const created = await internalApi(service)('POST', '/internal/events', {
      body: { organizerId: victim.id, title: { EN: 'Draft' }, startTime: '2030-01-01T10:00:00Z' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as string;
    const result = await rawRequest(service.publicUrl, 'POST', `/intern%61l/events/${id}/publish`, {
      headers: { authorization: `Bearer ${reader.key}` },
    });
    assert.equal(result.status, 404, result.text);
    const { rows } = await db.query<{ visibility: string }>('SELECT visibility FROM event WHERE id = $1', [id]);
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]?.visibility, 'public');
  });

  it("refuses POST /%69nternal/webhooks/{id}/enable: another tenant's signing secret is never returned", async () => {
    const subscribed = await publicApi(service)('POST', '/v1/webhooks', {
      key: victimSubscriber.key,
      body: { url: 'https://hooks.example.com/events', events: ['order.confirmed'] },
    });
    assert.equal(subscribed.status, 201, subscribed.text);
    const webhookId = subscribed.body.data.id as string;
    const result = await rawRequest(service.publicUrl, 'POST', `/%69nternal/webhooks/${webhookId}/enable`, {
      headers: { authorization: `Bearer ${reader.key}` },
    });
    assert.equal(result.status, 404, result.text);
    assert.doesNotMatch(result.text, /whsec_/);
  });

  it('refuses an absolute-form request target (POST http://x/internal/organisers)', async () => {
    const before = await count(db, 'organiser');
    for (const key of [reader.key, service.adminToken]) {
      const result = await rawRequest(service.publicUrl, 'POST', 'http://x/internal/organisers', {
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ name: 'Intruder' }),
      });
      assert.ok(isRouteMiss(result), `${result.status} ${result.text}`);
    }
    assert.equal(await count(db, 'organiser'), before);
  });

  describe('every registered route x both listeners x spellings x credentials (property)', () => {
    /** Ways to write one path that a router, proxy or client might treat as the same. */
    function spellings(path: string): string[] {
      const firstLetter = path.search(/[a-z]/);
      const encodedFirst =
        firstLetter === -1
          ? path
          : `${path.slice(0, firstLetter)}%${path.charCodeAt(firstLetter).toString(16)}${path.slice(firstLetter + 1)}`;
      const secondSegmentLetter = path.indexOf('/', 1) === -1 ? -1 : path.indexOf('/', 1) + 2;
      const encodedMiddle =
        secondSegmentLetter <= 1 || secondSegmentLetter >= path.length
          ? path
          : `${path.slice(0, secondSegmentLetter)}%${path.charCodeAt(secondSegmentLetter).toString(16).toUpperCase()}${path.slice(secondSegmentLetter + 1)}`;
      return [
        path,
        encodedFirst,
        encodedMiddle,
        encodedFirst.replace('%', '%25'), // double encoding
        path.toUpperCase(),
        path.replace(/[a-z]/, (letter) => letter.toUpperCase()), // mixed case
        `http://x${path}`, // absolute-form target
        `http://localhost:1${path}`,
        `/api${path}`, // a prefix in front of the path
        `/x/y${path}`,
        `${path}/`, // trailing slash
        `/${path}`, // double slash
        `${path.replace(/\/$/, '')}//`,
        `/v1/..${path}`, // dot segments
        `/./${path.slice(1)}`,
        `/internal/..${path}`,
        `${path};x=1`,
        `${path}%00`,
        `${path}?`,
      ];
    }

    it('answers each route only on its own listener and only with its own credential', async () => {
      const table = service.running.app.get(RouteTable);
      const routes = new Map<string, { method: string; path: string }>();
      for (const listener of ['public', 'admin'] as const) {
        for (const route of table.entries(listener)) routes.set(`${route.method} ${route.path}`, route);
      }
      assert.ok(routes.size >= 20, `only ${routes.size} routes registered`);
      const credentials = { none: undefined, apiKey: victim.key, adminToken: service.adminToken };
      let requests = 0;
      const failures: string[] = [];
      const agents = {
        public: new Agent({ keepAlive: true, maxSockets: 16 }),
        admin: new Agent({ keepAlive: true, maxSockets: 16 }),
      };
      after(() => {
        agents.public.destroy();
        agents.admin.destroy();
      });
      for (const route of routes.values()) {
        const concrete = route.path.replace(/:[A-Za-z0-9_]+/g, () => randomUUID()).replace(/\*$/, 'x');
        const serves = (listener: 'public' | 'admin'): boolean =>
          table.entries(listener).some((r) => r.path === route.path);
        const ownCredential = credentialOf(route.path);
        for (const listener of ['public', 'admin'] as const) {
          const getOutcomes = new Map<string, { status: number; miss: boolean }>();
          for (const method of route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]) {
            const baseUrl = listener === 'public' ? service.publicUrl : service.adminUrl;
            const cases = Object.entries(credentials).flatMap(([credentialName, secret]) =>
              spellings(concrete).map((target) => ({ credentialName, secret, target })),
            );
            const results = await Promise.all(
              cases.map(({ secret, target }) =>
                rawRequest(baseUrl, method, target, {
                  headers: secret === undefined ? {} : { authorization: `Bearer ${secret}` },
                  body: ['POST', 'PATCH', 'PUT', 'DELETE'].includes(method) ? '{}' : undefined,
                  agent: agents[listener],
                }),
              ),
            );
            results.forEach((result, index) => {
              const { credentialName, target } = nth(cases, index, 'request cases');
              requests += 1;
              // A HEAD answer has no body to tell a route miss from a handler's 404: it must match its GET.
              let miss = isRouteMiss(result);
              if (method === 'GET') getOutcomes.set(`${credentialName} ${target}`, { status: result.status, miss });
              if (method === 'HEAD') {
                const get = getOutcomes.get(`${credentialName} ${target}`);
                if (get === undefined || !sameOutcome(route.path, get.status, result.status))
                  failures.push(`HEAD differs from GET: ${target}`);
                miss = get?.miss ?? false;
              }
              const label = `${method} ${target} on ${listener} with ${credentialName}: ${result.status} ${result.text.slice(0, 120)}`;
              if (result.status >= 500 && !isReadinessAnswer(route.path, result.status)) failures.push(`5xx: ${label}`);
              if (!serves(listener) && !miss) failures.push(`answered on the wrong listener: ${label}`);
              // A dashboard page refuses a visitor without a session by sending them to the sign-in form.
              const refused = result.status === 401 || (ownCredential === 'session' && result.status === 303);
              const reachedHandler = !miss && !refused;
              if (reachedHandler && ownCredential !== 'none' && credentialName !== ownCredential) {
                failures.push(`passed with a foreign credential: ${label}`);
              }
              const literal = target === concrete && serves(listener);
              if (literal && ownCredential !== 'none' && credentialName !== ownCredential && !refused) {
                failures.push(`expected 401: ${label}`);
              }
            });
          }
        }
      }
      assert.deepEqual(failures.slice(0, 20), [], `${failures.length} of ${requests} requests broke the boundary`);
      assert.ok(requests > 2000, `only ${requests} requests`);
    });
  });
});

describe('trust boundary: guards closed by default and failures that cost the sender', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let organiser: Organiser;

  const app = withApp({ RATE_LIMIT_FAILURES_PER_CLIENT: '0', RATE_LIMIT_READS: '4' });
  before(async () => {
    await roomInRateWindow();
    ({ service, api } = app);
    organiser = await fixtures(service).organiser({ scopes: ['events:read'] });
  });

  it('authenticates before reading the body: a bad key with a malformed 1 MiB body is a 401, not a 400', async () => {
    const result = await api('POST', '/v1/events', {
      rawBody: `{"title": ${'['.repeat(1024 * 1024 - 20)}`,
      headers: { authorization: 'Bearer svc_live_nope', 'idempotency-key': 'k1' },
    });
    assertErrorBody(result, 401, 'unauthorized');
  });

  it('checks the admin token before reading the body: a tokenless or wrong-token internal write with malformed JSON or a non-JSON body is a 401, not a 400 or 415', async () => {
    const admin = internalApi(service);
    for (const token of [null, 'wrong-token']) {
      assertErrorBody(
        await admin('POST', '/internal/organisers', { token, rawBody: `{"name": ${'['.repeat(64 * 1024)}` }),
        401,
        'unauthorized',
      );
      assertErrorBody(
        await admin('POST', '/internal/organisers', {
          token,
          rawBody: 'name=x',
          headers: { 'content-type': 'text/plain' },
        }),
        401,
        'unauthorized',
      );
    }
    assertErrorBody(await admin('POST', '/internal/organisers', { rawBody: '{"broken' }), 400, 'invalid_argument');
  });

  it('refuses a request with several Authorization headers with 401, whichever of them is valid, on both listeners', async () => {
    const caller = await fixtures(service).organiser({ scopes: ['events:read'] });
    const twice = (first: string, second: string, path: string) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`;
    for (const [first, second] of [
      [caller.key, caller.key],
      [caller.key, 'svc_live_nope'],
      ['svc_live_nope', caller.key],
    ]) {
      const { result } = await sendRawBytes(service.publicUrl, twice(first!, second!, '/v1/me'));
      assertErrorBody(result, 401, 'unauthorized');
      assert.match((result.body as { message: string }).message, /exactly one Authorization header/);
    }
    const admin = await sendRawBytes(
      service.adminUrl,
      twice(service.adminToken, service.adminToken, '/internal/webhooks/whk_none'),
    );
    assertErrorBody(admin.result, 401, 'unauthorized');
    assert.equal((await api('GET', '/v1/me', { key: caller.key })).status, 200, 'one header is served');
  });

  it('never parses the body of an unknown path: malformed JSON there is a 404', async () => {
    assertErrorBody(await api('POST', '/v1/no-such-thing', { rawBody: '{"broken' }), 404, 'not_found');
  });

  it('answers DELETE /v1/webhooks/ (no id) with 400 invalid_argument, and Allow on that path says DELETE', async () => {
    const subscriber = await fixtures(service).organiser({ scopes: ['webhooks:write'] });
    assertErrorBody(await api('DELETE', '/v1/webhooks/', { key: subscriber.key }), 400, 'invalid_argument');
    const get = await api('GET', '/v1/webhooks/', { key: subscriber.key });
    assertErrorBody(get, 405, 'method_not_allowed');
    assert.equal(get.headers.get('allow'), 'DELETE');
  });

  it('treats an empty path parameter as no route: GET /v1/events/ is a route miss, never the handler with an empty id', async () => {
    const reader = await fixtures(service).organiser({ scopes: ['events:read'] });
    const result = await api('GET', '/v1/events/', { key: reader.key });
    assertErrorBody(result, 404, 'not_found');
    assert.match(result.body.message, /^No resource at/);
  });

  it('counts 403s against the account budget: a key refused for its scope is rate limited too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await api('GET', '/v1/orders', { key: organiser.key })).status);
    assert.deepEqual(statuses.slice(0, 4), [403, 403, 403, 403]);
    assert.equal(statuses[5], 429);
  });
});

describe('trust boundary: a budget for failed requests per client', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let organiser: Organiser;

  const app = withApp({ RATE_LIMIT_FAILURES_PER_CLIENT: '5' });
  before(async () => {
    await roomInRateWindow();
    ({ service, api } = app);
    organiser = await fixtures(service).organiser();
  });

  it('refuses a client over its failure budget with 429 and Retry-After, before any key lookup', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      statuses.push((await api('GET', '/v1/me', { key: `svc_live_${'0'.repeat(48)}` })).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
    const refused = await api('GET', '/v1/me', { key: organiser.key });
    assertErrorBody(refused, 429, 'rate_limited');
    assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
  });

  it('keeps the probes and the API reference reachable for a client over its failure budget', async () => {
    assert.equal((await api('GET', '/v1/me')).status, 429, 'the budget is used up');
    assert.equal((await api('GET', '/openapi.json')).status, 200);
    const probes = service.running.app.get(RouteTable).allowedMethods('/healthz', 'public');
    if (probes.length > 0) assert.equal((await api('GET', '/healthz')).status, 200);
  });

  it('gives the failure budget’s 429 the X-RateLimit-Limit, -Remaining and -Reset headers of every 429, counted as a client refusal', async () => {
    const clientRefusals = async (): Promise<number> => {
      const metrics = await internalApi(service)('GET', '/internal/metrics');
      const line = /^rate_limit_refusals_total\{reason="client"\} (\d+)$/m.exec(metrics.text);
      return Number(line?.[1] ?? Number.NaN);
    };
    const before = await clientRefusals();
    const refused = await api('GET', '/v1/me', { key: organiser.key });
    const nowSeconds = Date.now() / 1000;
    assertErrorBody(refused, 429, 'rate_limited');
    assert.equal(refused.headers.get('x-ratelimit-limit'), '5');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    const reset = Number(refused.headers.get('x-ratelimit-reset'));
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(reset) && reset > nowSeconds && reset <= nowSeconds + 61, `reset ${reset}`);
    assert.ok(Math.abs(reset - nowSeconds - retryAfter) <= 2, `Retry-After ${retryAfter} ends the window at ${reset}`);
    assert.equal(await clientRefusals(), before + 1);
  });

  it('counts the internal API’s failures apart: a client over its public failure budget still reaches the internal API, and admin-token guesses spend their own budget', async () => {
    const admin = internalApi(service);
    assert.equal((await api('GET', '/v1/me', { key: organiser.key })).status, 429, 'the public budget is used up');
    assert.equal((await admin('GET', '/internal/instances')).status, 200);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1)
      statuses.push((await admin('GET', '/internal/instances', { token: 'guess' })).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
    assert.equal(
      (await admin('GET', '/internal/instances', { token: 'guess' })).status,
      429,
      'the guesser’s address is refused',
    );
  });

  it('never refuses an admin-listener request that carries the valid admin token, while the same address’s wrong tokens are refused 429 past the budget', async () => {
    const admin = internalApi(service);
    const guesses: number[] = [];
    for (let i = 0; i < 6; i += 1)
      guesses.push((await admin('GET', '/internal/metrics', { token: `guess-${i}` })).status);
    assert.equal(guesses.at(-1), 429, `the budget is spent: ${guesses.join(', ')}`);
    // The metrics scrape and the operators behind the guesser's address keep the internal API.
    assert.equal((await admin('GET', '/internal/metrics')).status, 200);
    assert.equal((await admin('GET', '/internal/instances')).status, 200);
    const stillRefused = await admin('GET', '/internal/instances', { token: 'guess' });
    assertErrorBody(stillRefused, 429, 'rate_limited');
    assert.ok(Number(stillRefused.headers.get('retry-after')) > 0);
    // The public listener is unchanged: a valid key is refused there once its address is over the budget.
    assert.equal((await api('GET', '/v1/me', { key: organiser.key })).status, 429);
  });
});

describe('trust boundary: the failure budget under concurrent requests', () => {
  let organiser: Organiser;
  // Each test speaks for an address of its own through the trusted loopback proxy, so none spends another's budget.
  const app = withApp({ RATE_LIMIT_FAILURES_PER_CLIENT: '20', TRUSTED_PROXIES: '127.0.0.1/32' });
  before(async () => {
    await roomInRateWindow(20);
    organiser = await app.make.organiser();
  });
  const from = (address: string): Record<string, string> => ({ 'x-forwarded-for': address });

  it('answers at most the failure budget’s figure of 401s to a burst of concurrent requests with unknown keys, and 429 to the rest', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 300 }, async () => {
        const answer = await app.api('GET', '/v1/me', { key: generateApiKey(), headers: from('203.0.113.10') });
        return answer.status;
      }),
    );
    const answered = (status: number): number => statuses.filter((s) => s === status).length;
    assert.ok(answered(401) <= 20, `${answered(401)} answers of 401 to a budget of 20`);
    assert.equal(answered(401) + answered(429), 300, `statuses: ${[...new Set(statuses)].join(', ')}`);
    assert.equal((await app.api('GET', '/v1/me', { key: organiser.key, headers: from('203.0.113.10') })).status, 429);
  });

  it('charges a failure answered after its client closed the connection', async () => {
    const { hostname, port } = new URL(app.service.publicUrl);
    const request = (key: string): string =>
      `GET /v1/me HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nX-Forwarded-For: 203.0.113.11\r\n\r\n`;
    await Promise.all(
      Array.from(
        { length: 25 },
        () =>
          new Promise<void>((sent, failed) => {
            // Ends its side once written: the server drops the request before its key is looked up.
            const socket = connect(Number(port), hostname, () => socket.end(request(generateApiKey())));
            socket.on('error', failed);
            socket.on('close', () => sent());
            socket.resume();
          }),
      ),
    );
    const refusal = await eventually(
      async () => {
        const answer = await app.api('GET', '/v1/me', { key: organiser.key, headers: from('203.0.113.11') });
        assert.equal(answer.status, 429, 'the closed connections’ failures were counted');
        return /still being answered/.test(String(answer.body?.message)) ? undefined : answer;
      },
      'the closed connections’ requests to be settled',
      5_000,
    );
    assertErrorBody(refusal, 429, 'rate_limited');
  });

  it('lets concurrent requests with an accepted key through while failures and undecided requests stay under the figure, and charges them nothing', async () => {
    const address = from('203.0.113.12');
    for (let i = 0; i < 4; i += 1) {
      assert.equal((await app.api('GET', '/v1/me', { key: generateApiKey(), headers: address })).status, 401);
    }
    const statuses = await Promise.all(
      Array.from(
        { length: 16 },
        async () => (await app.api('GET', '/v1/me', { key: organiser.key, headers: address })).status,
      ),
    );
    assert.deepEqual(
      statuses,
      Array.from({ length: 16 }, () => 200),
    );
    const failures: number[] = [];
    for (let i = 0; i < 17; i += 1) {
      failures.push((await app.api('GET', '/v1/me', { key: generateApiKey(), headers: address })).status);
    }
    assert.deepEqual(failures, [...Array.from({ length: 16 }, () => 401), 429]);
  });
  it('lets a burst far above the failure budget’s figure through when its requests carry one valid key not looked up yet: they share one undecided unit', async () => {
    const fresh = await app.make.key({ type: 'organiser', id: organiser.id }, ['events:read']);
    const statuses = await Promise.all(
      Array.from(
        { length: 100 },
        async () => (await app.api('GET', '/v1/me', { key: fresh, headers: from('203.0.113.13') })).status,
      ),
    );
    assert.deepEqual([...new Set(statuses)], [200], `statuses: ${statuses.join(', ')}`);
  });

  it('counts an IPv6 client by its /64: unknown keys sent from ever new addresses of one /64 are refused 429 past the figure', async () => {
    const statuses: number[] = [];
    for (let host = 1; host <= 21; host += 1) {
      const answer = await app.api('GET', '/v1/me', { key: generateApiKey(), headers: from(`2001:db8:64:1::${host}`) });
      statuses.push(answer.status);
    }
    assert.deepEqual(statuses, [...Array.from({ length: 20 }, () => 401), 429]);
    const neighbour = await app.api('GET', '/v1/me', { key: organiser.key, headers: from('2001:db8:64:2::1') });
    assert.equal(neighbour.status, 200, 'another /64 keeps its own budget');
  });
});

describe('trust boundary: the client address behind a trusted proxy', () => {
  it('believes X-Forwarded-For only from TRUSTED_PROXIES, so one client behind the proxy cannot spend another one’s budget', async () => {
    const trusting = await startTestService({ RATE_LIMIT_FAILURES_PER_CLIENT: '2', TRUSTED_PROXIES: '127.0.0.1/32' });
    const untrusting = await startTestService({ RATE_LIMIT_FAILURES_PER_CLIENT: '2', TRUSTED_PROXIES: '10.9.9.9' });
    try {
      await roomInRateWindow();
      for (const [service, separateBudgets] of [
        [trusting, true],
        [untrusting, false],
      ] as const) {
        const api = publicApi(service);
        for (let i = 0; i < 2; i += 1) {
          await api('GET', '/v1/me', { headers: { 'x-forwarded-for': '203.0.113.1' } });
        }
        const other = await api('GET', '/v1/me', { headers: { 'x-forwarded-for': '203.0.113.2' } });
        assert.equal(
          other.status,
          separateBudgets ? 401 : 429,
          `TRUSTED_PROXIES=${service.config.trustedProxies.join(',')}`,
        );
        const same = await api('GET', '/v1/me', { headers: { 'x-forwarded-for': '203.0.113.1' } });
        assert.equal(same.status, 429);
      }
    } finally {
      await trusting.close();
      await untrusting.close();
    }
  });
});
