import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { captureLog } from './support/captured-log';
import { assertErrorBody } from './support/error-body';
import { type Organiser } from './support/fixtures';
import { internalApi, publicApi, type HttpResult } from './support/http-client';
import { type TestService } from './support/test-service';
import { withApp } from './support/with-app';

function nested(depth: number): string {
  return `{"startTime":"2027-01-01T10:00:00Z","deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

function manyKeys(count: number): string {
  const parts: string[] = [];
  for (let index = 0; index < count; index += 1) parts.push(`"k${index}":0`);
  return `{${parts.join(',')}}`;
}

describe('input hardening', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let organiser: Organiser;
  let stranger: Organiser;
  let db: Client;
  const log = captureLog();
  /** The log's lines as written (each a JSON object). */
  const logLines = (): string[] =>
    log
      .text()
      .split('\n')
      .filter((line) => line !== '');

  const createEvent = (key: string, body: unknown): Promise<HttpResult<any>> =>
    api('POST', '/v1/events', { key, body, headers: { 'idempotency-key': randomUUID() } });
  const rawPost = (path: string, rawBody: string, headers: Record<string, string> = {}): Promise<HttpResult<any>> =>
    api('POST', path, { key: organiser.key, rawBody, headers: { 'idempotency-key': randomUUID(), ...headers } });

  const app = withApp(
    { LOG_LEVEL: 'info', RATE_LIMIT_WRITES: '100000', RATE_LIMIT_READS: '100000' },
    { logTo: log.stream },
  );
  before(async () => {
    ({ service, api, admin, db } = app);
    const scopes = ['events:read', 'events:write', 'webhooks:read', 'webhooks:write'] as const;
    organiser = await app.make.organiser({ scopes: [...scopes] });
    stranger = await app.make.organiser({ scopes: [...scopes] });
  });

  describe('one body cannot freeze the process', () => {
    it('refuses an object of 80,000 keys with 400 naming the key limit, quickly, on the event routes', async () => {
      const started = Date.now();
      const result = await rawPost('/v1/events', manyKeys(80_000));
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /more than 1,000 keys/);
      assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    });

    it('refuses 1,001 keys on POST /v1/webhooks with 400 (validated as a plain object, never class-transformed)', async () => {
      const result = await rawPost('/v1/webhooks', manyKeys(1_001));
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /more than 1,000 keys/);
    });

    it('answers 200,000-deep nesting with 400, not 500, on event create (idempotency fingerprint included), webhooks and internal writes', async () => {
      for (const path of ['/v1/events', '/v1/webhooks']) {
        const result = await rawPost(path, nested(200_000));
        assert.ok(result.status === 400 || result.status === 413, `${path}: ${result.status}`);
        assertErrorBody(result, result.status, 'invalid_argument');
      }
      const created = await rawPost('/v1/events', nested(200_000));
      assertErrorBody(created, 400, 'invalid_argument');
      assert.match(created.body.message, /deeper than 32 levels/);
      assertErrorBody(await admin('POST', '/internal/events', { rawBody: nested(200_000) }), 400, 'invalid_argument');
    });

    it('allows 32 levels of nesting and refuses 33', async () => {
      // The body is level 1 and "deep" holds the rest.
      const ok = await rawPost('/v1/events', nested(31));
      assert.equal(ok.status, 201, ok.text);
      const deep = await rawPost('/v1/events', nested(32));
      assertErrorBody(deep, 400, 'invalid_argument');
      assert.match(deep.body.message, /deeper than 32 levels/);
    });

    it('refuses more than 10,000 values in all', async () => {
      const result = await rawPost(
        '/v1/events',
        `{"startTime":"2027-01-01T10:00:00Z","a":[${Array(10_001).fill('0').join(',')}]}`,
      );
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /more than 10,000 values/);
    });

    it('refuses strings longer than 10,000 characters, naming where', async () => {
      const result = await createEvent(organiser.key, { title: { en: 'x'.repeat(10_001) } });
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /title\.en is longer than 10,000 characters/);
    });

    it('keeps refusing prototype poisoning', async () => {
      const result = await rawPost('/v1/events', '{"startTime":"2027-01-01T10:00:00Z","__proto__":{"admin":true}}');
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /__proto__/);
    });
  });

  describe('bad text never reaches SQL as a 500', () => {
    it('refuses lone UTF-16 surrogates in values and keys with 400 naming the place', async () => {
      const inTitle = await createEvent(organiser.key, { title: { en: 'a\ud800b' } });
      assertErrorBody(inTitle, 400, 'invalid_argument');
      assert.match(inTitle.body.message, /title\.en must not contain a lone UTF-16 surrogate/);
      const inKey = await createEvent(organiser.key, { title: { ['\udc00']: 'x' } });
      assertErrorBody(inKey, 400, 'invalid_argument');
      assert.match(inKey.body.message, /A key of title must not contain a lone UTF-16 surrogate/);
      const webhook = await api('POST', '/v1/webhooks', {
        key: organiser.key,
        body: { url: 'https://example.com/\ud800', events: ['order.confirmed'], description: '\udfff' },
      });
      assertErrorBody(webhook, 400, 'invalid_argument');
      const internal = await admin('POST', '/internal/organisers', { body: { name: '\ud83d' } });
      assertErrorBody(internal, 400, 'invalid_argument');
    });

    it('refuses a JSON body that is not valid UTF-8 with 400, whatever charset it declares, storing nothing', async () => {
      const event = await createEvent(organiser.key, { startTime: '2027-01-01T10:00:00Z', title: { en: 'before' } });
      assert.equal(event.status, 201, event.text);
      const latin1 = Buffer.concat([Buffer.from('{"title":{"en":"caf'), Buffer.from([0xe9]), Buffer.from('"}}')]);
      for (const contentType of ['application/json', 'application/json; charset=iso-8859-1']) {
        const result = await api('PATCH', `/v1/events/${event.body.data.id}`, {
          key: organiser.key,
          rawBody: latin1,
          headers: { 'content-type': contentType },
        });
        assertErrorBody(result, 400, 'invalid_argument');
        assert.match(result.body.message, /not valid UTF-8/);
      }
      const stored = await api('GET', `/v1/events/${event.body.data.id}`, { key: organiser.key });
      assert.equal(stored.body.data.title, 'before');
      const internal = await admin('POST', '/internal/organisers', {
        rawBody: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
      });
      assertErrorBody(internal, 400, 'invalid_argument');
    });

    it('accepts surrogate pairs (emoji) as the valid text they are', async () => {
      const result = await createEvent(organiser.key, {
        startTime: '2027-01-01T10:00:00Z',
        title: { en: 'Party 🎉' },
      });
      assert.equal(result.status, 201, result.text);
    });

    it('refuses lone surrogates and NUL in query values and path parameters, and odd Idempotency-Keys, with 400', async () => {
      for (const path of [
        '/v1/events?cursor=%ED%A0%80',
        '/v1/events?updated_after=%ED%A0%80',
        '/v1/events?cursor=a%00b',
        '/v1/events/%ED%A0%80',
        '/v1/events/a%00b',
      ]) {
        const result = await api('GET', path, { key: organiser.key });
        assert.equal(result.status, 400, `${path}: ${result.text}`);
      }
      for (const key of ['é', 'a b', 'x'.repeat(256)]) {
        const result = await api('POST', '/v1/events', {
          key: organiser.key,
          body: { startTime: '2027-01-01T10:00:00Z' },
          headers: { 'idempotency-key': key },
        });
        assertErrorBody(result, 400, 'invalid_argument');
      }
    });

    it('documents the Idempotency-Key rule it applies: 1 to 255 printable ASCII characters without spaces', async () => {
      const document = (await (await fetch(`${service.publicUrl}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { parameters?: Array<{ name: string; schema?: any }> }>>;
      };
      const header = document.paths['/v1/events']?.post?.parameters?.find((p) => p.name === 'Idempotency-Key');
      assert.deepEqual(header?.schema, { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' });
      const pattern = new RegExp(header?.schema.pattern);
      for (const [key, taken] of [
        ['x'.repeat(255), true],
        ['~!{}', true],
        ['x'.repeat(256), false],
        ['a b', false],
      ] as const) {
        assert.equal(pattern.test(key) && key.length <= 255, taken, key.slice(0, 20));
        const result = await api('POST', '/v1/events', {
          key: organiser.key,
          body: { startTime: '2027-01-01T10:00:00Z' },
          headers: { 'idempotency-key': key },
        });
        assert.equal(result.status, taken ? 201 : 400, `${key.slice(0, 20)}: ${result.text}`);
      }
    });
  });

  describe('instants limited to years 0001-9999', () => {
    it('answers updated_after=8640000000000000 with 400', async () => {
      for (const value of ['8640000000000000', '-8640000000000000', '253402300800000', '0000-12-31T00:00:00Z']) {
        assertErrorBody(
          await api('GET', `/v1/events?updated_after=${value}`, { key: organiser.key }),
          400,
          'invalid_argument',
        );
      }
    });

    it('answers startTime -8640000000000000 and a year-275760 startTime with 400, storing nothing', async () => {
      const before = (await db.query('SELECT count(*)::int AS n FROM event')).rows[0].n as number;
      for (const startTime of [-8_640_000_000_000_000, 8_640_000_000_000_000, '8640000000000000', '10000-01-01']) {
        assertErrorBody(await createEvent(organiser.key, { startTime }), 400, 'invalid_argument');
      }
      const created = await createEvent(organiser.key, { startTime: '2027-01-01T10:00:00Z' });
      assertErrorBody(
        await api('PATCH', `/v1/events/${created.body.data.id}`, {
          key: organiser.key,
          body: { endTime: 8_640_000_000_000_000 },
        }),
        400,
        'invalid_argument',
      );
      const afterCount = (await db.query('SELECT count(*)::int AS n FROM event')).rows[0].n as number;
      assert.equal(afterCount, before + 1);
    });

    it('accepts the first and last millisecond of the range', async () => {
      for (const startTime of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
        const result = await createEvent(organiser.key, { startTime });
        assert.equal(result.status, 201, result.text);
        assert.equal(result.body.data.startTime, new Date(startTime).toISOString());
      }
    });
  });

  describe("ownership before any body rule (another account's resource is 404)", () => {
    it('answers PATCH of another organiser’s event with 404 not_found whatever the body says', async () => {
      const theirs = await createEvent(stranger.key, { startTime: '2027-01-01T10:00:00Z' });
      assert.equal(theirs.status, 201);
      for (const body of [{ visibility: 'public' }, { visibility: 'cancelled' }, {}, { startTime: 'soon' }, { x: 1 }]) {
        assertErrorBody(
          await api('PATCH', `/v1/events/${theirs.body.data.id}`, { key: organiser.key, body }),
          404,
          'not_found',
        );
      }
      const mine = await createEvent(organiser.key, { startTime: '2027-01-01T10:00:00Z' });
      assertErrorBody(
        await api('PATCH', `/v1/events/${mine.body.data.id}`, { key: organiser.key, body: { visibility: 'public' } }),
        403,
        'forbidden',
      );
    });

    it('answers DELETE of another account’s webhook with 404 whatever the body says', async () => {
      const theirs = await api('POST', '/v1/webhooks', {
        key: stranger.key,
        body: { url: 'https://example.com/hook', events: ['order.confirmed'] },
      });
      assert.equal(theirs.status, 201, theirs.text);
      for (const body of [undefined, {}, { actorRole: 'nobody' }]) {
        assertErrorBody(
          await api('DELETE', `/v1/webhooks/${theirs.body.data.id}`, { key: organiser.key, body }),
          404,
          'not_found',
        );
      }
    });
  });

  describe('a write sent without any body', () => {
    it('answers 400 with the error body, never 500, on the event create routes of both listeners', async () => {
      const internal = await admin('POST', '/internal/events');
      assertErrorBody(internal, 400, 'invalid_argument');
      assert.match(internal.body.message, /organizerId/);
      const created = await api('POST', '/v1/events', {
        key: organiser.key,
        headers: { 'idempotency-key': randomUUID() },
      });
      assertErrorBody(created, 400, 'invalid_argument');
    });
  });

  describe('per-route body limits, and no parsing where no route matched', () => {
    it('limits DELETE bodies to 1 KiB and POST /v1/webhooks to 16 KiB, with 413 naming the route’s limit', async () => {
      const del = await api('DELETE', '/v1/webhooks/whk_x', { key: organiser.key, body: { pad: 'x'.repeat(2000) } });
      assertErrorBody(del, 413, 'invalid_argument');
      assert.match(del.body.message, /larger than 1024 bytes/);
      const hook = await api('POST', '/v1/webhooks', { key: organiser.key, body: { description: 'x'.repeat(17_000) } });
      assertErrorBody(hook, 413, 'invalid_argument');
      assert.match(hook.body.message, /larger than 16384 bytes/);
      // Event writes keep BODY_LIMIT_BYTES: 20 KiB of free-form data is fine there.
      const event = await createEvent(organiser.key, {
        startTime: '2027-01-01T10:00:00Z',
        title: { en: 'x'.repeat(9_000), de: 'y'.repeat(9_000), fr: 'z'.repeat(9_000) },
      });
      assert.equal(event.status, 201, event.text);
    });

    it('answers an unknown path with 404 and a known path’s wrong method with 405 without parsing the body', async () => {
      assertErrorBody(await rawPost('/v1/nothing-here', '{"broken": '), 404, 'not_found');
      assertErrorBody(await rawPost('/v1/me', '{"broken": '), 405, 'method_not_allowed');
      assertErrorBody(await rawPost('/v1/nothing-here', nested(200_000)), 404, 'not_found');
    });

    it('refuses a declared length over the route’s limit before reading the body', async () => {
      const url = new URL(`${service.publicUrl}/v1/webhooks`);
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: {
              authorization: `Bearer ${organiser.key}`,
              'content-type': 'application/json',
              'content-length': String(100 * 1024 * 1024),
            },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
            req.destroy();
          },
        );
        req.on('error', reject);
        req.write('{"url": "');
      });
      assert.equal(status, 413);
    });
  });

  describe('logs never carry SQL parameters or driver detail', () => {
    it('logs a failing insert as type, code and a value-free message only', async () => {
      const secretValue = `leak-${randomUUID()}@billing.example`;
      await db.query(
        `ALTER TABLE organiser ADD CONSTRAINT test_refuses_marked_names CHECK (name NOT LIKE 'leak-%') NOT VALID`,
      );
      try {
        const result = await admin('POST', '/internal/organisers', {
          body: { name: secretValue },
          headers: { 'x-request-id': 'failing-insert-1' },
        });
        assertErrorBody(result, 500, 'internal');
        assert.doesNotMatch(result.text, /leak-|organiser|INSERT/);
      } finally {
        await db.query('ALTER TABLE organiser DROP CONSTRAINT test_refuses_marked_names');
      }
      const line = logLines().find((text) => text.includes('failing-insert-1') && text.includes('unexpected error'));
      assert.ok(line, 'the failure is logged');
      const entry = JSON.parse(line) as { error: Record<string, unknown> };
      assert.equal(entry.error['code'], '23514');
      assert.equal(entry.error['constraint'], 'test_refuses_marked_names');
      assert.equal(entry.error['type'], 'QueryFailedError');
      for (const text of logLines()) {
        assert.ok(!text.includes(secretValue), `a log line carries the value: ${text.slice(0, 300)}`);
        assert.doesNotMatch(text, /INSERT INTO|Failing row|"parameters"|"driverError"|"detail"/);
      }
    });
  });

  describe('idempotency keys kept 7 days', () => {
    it('keeps every key of an organiser for 7 days however many newer ones it makes: a retry after 10,100 newer keys and 100 more creates replays', async () => {
      const owner = await app.make.organiser({ scopes: ['events:write'] });
      const create = (key: string): ReturnType<typeof api> =>
        api('POST', '/v1/events', {
          key: owner.key,
          body: { startTime: '2027-01-01T10:00:00Z' },
          headers: { 'idempotency-key': key },
        });
      const first = await create('first');
      assert.equal(first.status, 201, first.text);
      await db.query(
        `INSERT INTO idempotency_key (organizer_id, key, state, request_fingerprint, created_at)
         SELECT $1, 'newer-' || n, 'succeeded', 'x', now() + n * interval '1 ms'
           FROM generate_series(1, 10100) AS n`,
        [owner.id],
      );
      for (let n = 1; n <= 100; n += 1) assert.equal((await create(`later-${n}`)).status, 201);

      const retried = await create('first');
      assert.equal(retried.status, 201, retried.text);
      assert.equal(retried.headers.get('idempotent-replayed'), 'true');
      assert.equal(retried.body.data.id, first.body.data.id, 'the retry created nothing');
    });
  });
});
