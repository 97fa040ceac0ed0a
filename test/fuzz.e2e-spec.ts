import fc from 'fast-check';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { EVENT_PATCH_FIELDS } from '../libs/event-rules';
import { RouteTable, type RouteEntry } from '../src/common/http/route-table';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import type { TestService } from './support/test-service';
import { scheduledJobRuns } from './support/scheduled-job-runs';
import { changedTables, TableSnapshots } from './support/table-snapshot';
import { withApp } from './support/with-app';

/**
 * Fuzzing every route of both listeners (the route table, so a new route is
 * fuzzed without editing this file) with hostile paths, query strings,
 * headers and bodies. Two properties, checked on every request:
 * - no answer is a 5xx, and every error has the contract's error body;
 * - no half-write: a request that did not succeed (and any read) leaves
 *   every table exactly as it was, and a 201 adds a row.
 */

interface RawResult {
  status: number;
  text: string;
  contentType: string;
}

function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<RawResult> {
  const url = new URL(baseUrl);
  // Node sends a DELETE body neither chunked nor with a length unless told: the length is always given.
  if (body !== undefined) headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          text,
          contentType: String(response.headers['content-type'] ?? ''),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Percent-encodes the UTF-8 bytes of any text, so even a lone surrogate makes a valid request target. */
function encodeBytes(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).padStart(2, '0')}`,
    )
    .join('');
}

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
/** The code points past the surrogates (U+D800 to U+DFFF) follow U+D7FF in the unit's numbering. */
const SURROGATES = 0xe000 - 0xd800;
/**
 * fast-check's `unit: 'binary'` (any code point but a lone surrogate, numbered as it numbers them, so
 * the same seed draws the same strings, dangerous slices such as `__proto__` included) with an
 * unmapper that computes what fast-check's looks up in a map of all 1,112,064 code points: building
 * that map cost 0.9 CPU-seconds each time this file was loaded.
 */
const anyCodePoint = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    const code = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (code === undefined || String.fromCodePoint(code) !== value || (code >= 0xd800 && code < 0xe000)) {
      throw new Error('not one code point of the unit');
    }
    return code < 0xd800 ? code : code - SURROGATES;
  },
);
const shortHostileText = fc.oneof(
  fc.string(),
  fc.string({ unit: anyCodePoint }),
  fc.string({ unit: fc.oneof(loneSurrogate, fc.constantFrom('a', '\u0000', '😀', '"', '\\')) }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', 'a\udc00b', '9'.repeat(400), '-1', '1e400'),
);
const hostileText = fc.oneof(
  { weight: 9, arbitrary: shortHostileText },
  { weight: 1, arbitrary: fc.constant('x'.repeat(10_001)) },
);
/** Pieces of a request target that decode to something odd, or to nothing valid at all. */
const rawPathPiece = fc.oneof(
  shortHostileText.map(encodeBytes),
  fc.constantFrom('%ED%A0%80', '%C0%AF', '%FF', '%00', '%2e%2e', '%2F', '%', '%%', '..', '.', '', 'a'.repeat(300)),
);
const instantLike = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('8640000000000000', '-8640000000000000', '0000-01-01', '9999-12-31T23:59:59.999Z', '2027-01-01'),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
);
const jsonScalar = fc.oneof(
  hostileText,
  instantLike,
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(8_640_000_000_000_000, -8_640_000_000_000_000, 1e308, -0),
);
const latin1 = fc
  .integer({ min: 0x20, max: 0xff })
  .filter((code) => code !== 0x7f)
  .map((code) => String.fromCharCode(code));
const headerText = fc.string({ unit: latin1, maxLength: 300 });

/** Body members worth guessing at: each route's own fields, plus anything. */
const KNOWN_FIELDS = [
  ...EVENT_PATCH_FIELDS,
  'url',
  'events',
  'description',
  'enabled',
  'name',
  'placeholder',
  'principal',
  'scopes',
  'actorRole',
  'organizerId',
  'eventId',
  'status',
  'isRsvp',
  'lineItems',
  'totalAmountMinor',
  'currency',
  'billingName',
  'billingEmail',
  'locations',
  'displayName',
  'city',
  'country',
  'timeZone',
  'slug',
];

function bodies(ids: () => string[]): fc.Arbitrary<string | undefined> {
  const value = fc.oneof(
    { weight: 3, arbitrary: jsonScalar },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.array(jsonScalar, { maxLength: 5 }) },
    { weight: 1, arbitrary: fc.dictionary(hostileText, jsonScalar, { maxKeys: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom(...ids()) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { type: 'organiser', id: ids()[0] },
        [{ quantity: 1, unitPriceMinor: 100 }],
        { date: { mode: 'fixed' } },
        ['order.confirmed', 'event.published'],
        'https://hooks.example.com/x',
        'https://[::ffff:0:127.0.0.1]/',
      ),
    },
  );
  const key = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...KNOWN_FIELDS) },
    { weight: 1, arbitrary: hostileText },
  );
  return fc.oneof(
    { weight: 6, arbitrary: fc.dictionary(key, value, { maxKeys: 8 }).map((body) => JSON.stringify(body)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.jsonValue().map((body) => JSON.stringify(body)) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        hostileText,
        fc.constantFrom('{"a":', '{', '', 'null', '{"__proto__":{"x":1}}', `${'['.repeat(5000)}${']'.repeat(5000)}`),
      ),
    },
  );
}

function fill(path: string, value: (name: string) => string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => value(name));
}

describe('fuzzing every route: no 5xx and no half-write', () => {
  let service: TestService;
  let db: Client;
  let snapshots: TableSnapshots;
  let organiser: Organiser;
  let other: Organiser;
  let venue: Venue;
  let disposableKeyId: string;
  const ids: string[] = [];
  let routes: { public: RouteEntry[]; admin: RouteEntry[] };

  const app = withApp({
    RATE_LIMIT_READS: '10000000',
    RATE_LIMIT_WRITES: '10000000',
    RATE_LIMIT_FAILURES_PER_CLIENT: '0',
    WEBHOOK_POLL_MS: '3600000',
    // The scheduled jobs claim and run every second while the requests are checked, as they do in production
    // once a service has run past its first claim: their writes are the service's own, never a request's.
    SCHEDULED_JOB_PERIOD_SECONDS: '1',
  });
  before(async () => {
    ({ service, db } = app);
    const make = fixtures(service);
    const api = publicApi(service);
    const admin = internalApi(service);
    organiser = await make.organiser({
      scopes: ['events:read', 'events:write', 'orders:read', 'webhooks:read', 'webhooks:write'],
    });
    other = await make.organiser();
    venue = await make.venue();
    const spare = await admin('POST', '/internal/keys', {
      body: { principal: { type: 'organiser', id: organiser.id }, actorRole: 'owner' },
    });
    disposableKeyId = spare.body.data.id as string;
    const event = await api('POST', '/v1/events', {
      key: organiser.key,
      body: { startTime: '2027-01-01T10:00:00Z', locationId: venue.locationIds[0] },
      headers: { 'idempotency-key': randomUUID() },
    });
    const hook = await api('POST', '/v1/webhooks', {
      key: organiser.key,
      body: { url: 'https://hooks.example.com/x', events: ['order.confirmed'] },
    });
    const order = await admin('POST', '/internal/orders', {
      body: { eventId: event.body.data.id, status: 'confirmed', lineItems: [{ quantity: 1, unitPriceMinor: 500 }] },
    });
    ids.push(
      organiser.id,
      other.id,
      venue.id,
      ...venue.locationIds,
      event.body.data.id as string,
      hook.body.data.id as string,
      disposableKeyId,
    );
    if (typeof order.body?.data?.id === 'string') ids.push(order.body.data.id as string);

    const table = service.running.app.get(RouteTable, { strict: false });
    routes = { public: table.entries('public'), admin: table.entries('admin') };
    assert.ok(routes.public.length >= 10 && routes.admin.length >= 10, 'the route table lists both listeners');

    snapshots = await TableSnapshots.of(db);
  });

  function requests(listener: 'public' | 'admin'): fc.Arbitrary<{
    method: string;
    path: string;
    headers: Record<string, string>;
    body: string | undefined;
    route: RouteEntry | null;
  }> {
    const known = routes[listener];
    const idValue = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...ids).map(encodeBytes) },
      { weight: 2, arbitrary: rawPathPiece },
    );
    const routed = fc
      .record({ route: fc.constantFrom(...known), values: fc.array(idValue, { minLength: 3, maxLength: 3 }) })
      .map(({ route, values }) => {
        let at = 0;
        return {
          route,
          path: fill(route.path, (name) =>
            // Never revoke the key the fuzzer itself uses.
            name === 'keyId' ? encodeBytes(disposableKeyId) : (values[at++ % values.length] ?? ''),
          ),
        };
      });
    const stray = fc
      .array(fc.oneof(fc.constantFrom('v1', 'internal', 'events', 'webhooks', 'orders', 'me', ''), rawPathPiece), {
        minLength: 1,
        maxLength: 5,
      })
      .map((segments) => ({ route: null, path: `/${segments.join('/')}` }));
    const query = fc
      .array(
        fc.tuple(
          fc.oneof(fc.constantFrom('limit', 'cursor', 'updated_after', 'x'), rawPathPiece),
          fc.oneof(instantLike.map(encodeBytes), rawPathPiece, fc.integer().map(String)),
        ),
        { maxLength: 4 },
      )
      .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`));
    const credential =
      listener === 'admin'
        ? fc.oneof(
            { weight: 8, arbitrary: fc.constant(`Bearer ${service.adminToken}`) },
            { weight: 1, arbitrary: headerText },
          )
        : fc.oneof(
            { weight: 6, arbitrary: fc.constant(`Bearer ${organiser.key}`) },
            { weight: 2, arbitrary: fc.constantFrom(`Bearer ${venue.key}`, `Bearer ${other.key}`) },
            { weight: 1, arbitrary: headerText },
            { weight: 1, arbitrary: fc.constant(undefined) },
          );
    const headers = fc.record(
      {
        authorization: credential,
        'content-type': fc.oneof(
          { weight: 6, arbitrary: fc.constant('application/json') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              'application/json; charset=utf-8',
              'text/plain',
              'application/x-www-form-urlencoded',
              'application/vnd.x+json',
              'application/json; charset=latin1',
            ),
          },
          { weight: 1, arbitrary: headerText },
        ),
        'idempotency-key': fc.oneof(fc.uuid(), headerText),
        'if-match': headerText,
        'if-none-match': headerText,
        'x-request-id': headerText,
        'x-forwarded-for': headerText,
      },
      { requiredKeys: ['content-type'] },
    );
    return fc
      .record({
        target: fc.oneof({ weight: 9, arbitrary: routed }, { weight: 1, arbitrary: stray }),
        query,
        otherMethod: fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'), {
          freq: 8,
        }),
        headers,
        body: bodies(() => ids),
      })
      .map(({ target, query: search, otherMethod, headers: raw, body }) => {
        const method = otherMethod ?? target.route?.method ?? 'GET';
        const sent: Record<string, string> = {};
        for (const [name, value] of Object.entries(raw)) if (typeof value === 'string') sent[name] = value;
        const withBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
        if (!withBody) delete sent['content-type'];
        return {
          method,
          path: `${target.path}${search}`,
          headers: sent,
          body: withBody ? body : undefined,
          route: target.route,
        };
      });
  }

  async function check(
    listener: 'public' | 'admin',
    request: { method: string; path: string; headers: Record<string, string>; body: string | undefined },
  ): Promise<void> {
    // The state after the previous request is the state before this one (background columns aside).
    const before = await snapshots.latest();
    const base = listener === 'admin' ? service.adminUrl : service.publicUrl;
    const result = await send(base, request.method, request.path, request.headers, request.body);
    const what = `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers).slice(0, 300)} ${String(request.body).slice(0, 300)}`;
    assert.ok(result.status < 500, `${what} answered ${result.status}: ${result.text.slice(0, 300)}`);
    // 431 (request target or headers over Node's 16 KiB) is answered by Node's HTTP parser itself, without a body.
    // The dashboard's pages (admin listener) and the portal's (/portal) answer people, so their refusals are HTML
    // pages, not the API's error body.
    const dashboardPage =
      (listener === 'admin' || /^\/portal(?:[/?]|$)/.test(request.path)) && result.contentType.startsWith('text/html');
    if (result.status >= 400 && request.method !== 'HEAD' && result.status !== 431 && !dashboardPage) {
      const body = JSON.parse(result.text) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'request_id'], what);
    }
    const afterwards = await snapshots.take();
    const changed = changedTables(before, afterwards);
    const succeededWrite =
      result.status >= 200 && result.status < 300 && !['GET', 'HEAD', 'OPTIONS'].includes(request.method);
    if (!succeededWrite)
      assert.deepEqual(changed, [], `${what} answered ${result.status} but changed ${changed.join(', ')}`);
    if (result.status === 201 && !result.text.includes('"replayed"')) {
      const grew = Object.keys(before.counts).some(
        (name) => (afterwards.counts[name] ?? 0) > (before.counts[name] ?? 0),
      );
      assert.ok(grew, `${what} answered 201 but no table has a new row`);
    }
  }

  it('public listener: thousands of hostile requests, no 5xx, no half-write', async () => {
    await fc.assert(
      fc.asyncProperty(requests('public'), (request) => check('public', request)),
      { numRuns: 1200, includeErrorInReport: true },
    );
  });

  it('internal listener: hostile requests with the admin token, no 5xx, no half-write', async () => {
    await fc.assert(
      fc.asyncProperty(requests('admin'), (request) => check('admin', request)),
      { numRuns: 800, includeErrorInReport: true },
    );
  });

  it('checked the requests while every scheduled job ran: the jobs’ own writes never counted as a request’s', async () => {
    // Read right after the checks, without waiting: each job runs a period (1 s here) after its first claim, and
    // the checks above take many periods, so a job that has not run yet did not run while they did.
    const runs = await scheduledJobRuns(service);
    assert.ok(runs.size >= 4, `runs of ${[...runs.keys()].join(', ')}`);
    for (const [job, count] of runs) assert.ok(count >= 1, `${job} ran ${count} times`);
  });
});
