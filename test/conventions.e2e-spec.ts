import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { before, describe, it } from 'node:test';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi, roundTrip } from './support/http-client';
import { readUntilClosed, sendRawBytes } from './support/raw-bytes';
import { load } from 'js-yaml';
import pino from 'pino';
import { startService } from '../src/bootstrap';
import { OpenApiDocumentStore } from '../src/common/openapi/openapi-document.store';
import { loadAppConfig } from '../src/config/app-config';
import { freshDatabase } from './support/test-database';
import { loopbackSettings, type TestService } from './support/test-service';
import { withApp } from './support/with-app';

describe('conventions every response shares', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let organiser: Organiser;
  let venue: Venue;

  const app = withApp({ BODY_LIMIT_BYTES: '2048', KEEP_ALIVE_TIMEOUT_SECONDS: '620' });
  before(async () => {
    ({ service, api, admin } = app);
    organiser = await fixtures(service).organiser();
    venue = await fixtures(service).venue();
  });

  describe('envelopes', () => {
    it('wraps a single resource in {data}', async () => {
      const result = await api('GET', '/v1/me', { key: organiser.key });
      assert.equal(result.status, 200);
      assert.deepEqual(Object.keys(result.body), ['data']);
    });

    it('wraps a list in {data, has_more, next_cursor} even where a second page is impossible', async () => {
      const result = await api('GET', '/v1/venues', { key: venue.key });
      assert.equal(result.status, 200);
      assert.deepEqual(Object.keys(result.body).sort(), ['data', 'has_more', 'next_cursor']);
      assert.equal(result.body.has_more, false);
      assert.equal(result.body.next_cursor, null);
      assert.equal(result.body.data.length, 1);
    });
  });

  describe('error body', () => {
    it('answers an unknown route with 404 not_found in the error body', async () => {
      assertErrorBody(await api('GET', '/v1/nothing-here'), 404, 'not_found');
      assertErrorBody(await api('GET', '/'), 404, 'not_found');
    });

    it('answers requests the HTTP parser refuses (header fields over 16 KiB, a malformed header line) in the error body with X-Request-Id, on both listeners, closing the connection', async () => {
      for (const baseUrl of [service.publicUrl, service.adminUrl]) {
        const huge = await sendRawBytes(
          baseUrl,
          `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        );
        assertErrorBody(huge.result, 431, 'invalid_argument');
        assert.equal(huge.result.headers.get('x-content-type-options'), 'nosniff');
        assert.ok(huge.closed, 'the connection is closed after a 431');
        const malformed = await sendRawBytes(baseUrl, 'GET /v1/me HTTP/1.1\r\nHost x\r\n\r\n');
        assertErrorBody(malformed.result, 400, 'invalid_argument');
        assert.ok(malformed.closed, 'the connection is closed after a malformed request');
      }
    });

    it('answers pipelined requests that came before malformed bytes first, in order, then refuses those with 400 and closes', async () => {
      // One write: two whole requests (the first reads the database, so its answer is still being made when the
      // parser meets the bad header line), then a malformed one.
      const bytes =
        `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${organiser.key}\r\n\r\n` +
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /v1 HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n';
      const received = await readUntilClosed(service.publicUrl, bytes);
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
      assert.deepEqual(statuses, [200, 200, 400], received);
      assert.match(received, new RegExp(`"id":"${organiser.id}"`), 'the first answer is the first request’s');
      assert.match(received.slice(received.lastIndexOf('HTTP/1.1 400')), /^Date: .+ GMT\r$/m);
    });

    it('refuses two Host headers, a Host that is not a host, and Transfer-Encoding on HTTP/1.0 with 400 invalid_argument, closing the connection, on both listeners', async () => {
      for (const baseUrl of [service.publicUrl, service.adminUrl]) {
        for (const bytes of [
          'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
          'GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n',
          'POST /healthz HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
          // The router's own refusal of the URL closes it too.
          'POST /v1/%zz HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        ]) {
          const answer = await sendRawBytes(baseUrl, bytes);
          assertErrorBody(answer.result, 400, 'invalid_argument');
          assert.ok(answer.closed, `the connection is closed after ${JSON.stringify(bytes)}`);
        }
      }
    });

    it('answers an Expect it cannot meet with 417 in the error body with X-Request-Id, on both listeners', async () => {
      for (const baseUrl of [service.publicUrl, service.adminUrl]) {
        const answer = await sendRawBytes(
          baseUrl,
          'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: expects-1\r\nExpect: something\r\n\r\n',
        );
        assertErrorBody(answer.result, 417, 'invalid_argument');
        assert.equal(answer.result.headers.get('x-request-id'), 'expects-1');
        assert.equal((answer.result.body as { request_id: string }).request_id, 'expects-1');
      }
    });

    it('closes the connection after answering a request that asks for an Upgrade, so a request pipelined behind it is never left waiting', async () => {
      const bytes =
        'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n' +
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
      const received = await readUntilClosed(service.publicUrl, bytes);
      assert.match(received, /^HTTP\/1\.1 200 /);
      assert.match(received, /^connection: close\r$/im);
      // The router's own refusal of a URL too.
      const refused = await readUntilClosed(
        service.publicUrl,
        'GET /v1/%zz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      );
      assert.match(refused, /^HTTP\/1\.1 400 /);
    });

    it('answers bad bytes inside the body of the request being read at once, with 400, instead of waiting for that request’s answer', async () => {
      const answer = await sendRawBytes(
        service.publicUrl,
        `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${organiser.key}\r\nIdempotency-Key: ${randomUUID()}\r\n` +
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n',
      );
      assertErrorBody(answer.result, 400, 'invalid_argument');
      assert.ok(answer.closed, 'the connection is closed');
    });

    it('answers 100 Continue only to a request nothing before its body refuses: never to a bad key, an unknown route or a body over the limit', async () => {
      const expecting = (path: string, key: string | null, length: number): string =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${key === null ? '' : `Authorization: Bearer ${key}\r\n`}` +
        `Idempotency-Key: ${randomUUID()}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
        'Expect: 100-continue\r\n\r\n';
      const writer = await fixtures(service).organiser({ scopes: ['events:read', 'events:write'] });
      // Refused from the head alone: the first answer is the refusal, not 100 Continue.
      for (const [head, status] of [
        [expecting('/v1/events', null, 5_000_000), 401],
        [expecting('/v1/nothing-here', writer.key, 5_000_000), 404],
        [expecting('/v1/events', writer.key, 5_000), 413],
      ] as const) {
        // Read until the server closes (it does, the body never having been asked for): no timing of its own.
        const answered = await readUntilClosed(service.publicUrl, head);
        assert.match(answered, new RegExp(`^HTTP/1\\.1 ${status} `), head);
      }
      // Accepted: asked for its body, then created.
      const body = JSON.stringify({ title: { EN: 'Continued' }, startTime: '2030-01-01T18:00:00Z' });
      const { hostname, port } = new URL(service.publicUrl);
      const received = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () =>
          socket.write(expecting('/v1/events', writer.key, Buffer.byteLength(body))),
        );
        let text = '';
        const timer = setTimeout(() => reject(new Error(`no answer:\n${text}`)), 5_000);
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          if (text === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body);
          else if (/\r\n\r\n\{/.test(text) && text.endsWith('}')) {
            clearTimeout(timer);
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('error', reject);
      });
      assert.match(received, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
    });

    it('refuses an HTTP/1.1 request without Host with 400 invalid_argument in the error body, on both listeners; HTTP/1.0 needs none', async () => {
      for (const baseUrl of [service.publicUrl, service.adminUrl]) {
        const answer = await sendRawBytes(baseUrl, 'GET /healthz HTTP/1.1\r\nX-Request-Id: no-host-1\r\n\r\n');
        assertErrorBody(answer.result, 400, 'invalid_argument');
        assert.equal(answer.result.headers.get('x-request-id'), 'no-host-1');
        assert.match(answer.result.text, /Host header/);
        const old = await sendRawBytes(baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n');
        assert.equal(old.result.status, 200);
      }
    });

    it('answers malformed JSON with 400 invalid_argument', async () => {
      const result = await admin('POST', '/internal/organisers', { rawBody: '{"name": ' });
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /not valid JSON/);
    });

    it('answers a JSON body that is not an object with 400 invalid_argument', async () => {
      for (const rawBody of ['[1,2]', '"text"', '42', 'null']) {
        const result = await admin('POST', '/internal/organisers', { rawBody });
        assertErrorBody(result, 400, 'invalid_argument');
      }
    });

    it('answers a body over the size limit with 413 in the error body', async () => {
      const result = await admin('POST', '/internal/organisers', { body: { name: 'x'.repeat(5000) } });
      assertErrorBody(result, 413, 'invalid_argument');
    });

    it('answers a malformed or oversized URL with the error body and a request id', async () => {
      assertErrorBody(await api('GET', '/v1/events/%E0%A4%A', { key: organiser.key }), 400, 'invalid_argument');
      assertErrorBody(
        await api('GET', `/v1/events/${'a'.repeat(5000)}`, { key: organiser.key }),
        414,
        'invalid_argument',
      );
    });

    it('refuses the NUL character in path parameters and bodies instead of failing in the database', async () => {
      assertErrorBody(await api('GET', '/v1/events/abc%00def', { key: organiser.key }), 400, 'invalid_argument');
      assertErrorBody(
        await admin('POST', '/internal/organisers', { body: { name: 'a\u0000b' } }),
        400,
        'invalid_argument',
      );
      assertErrorBody(
        await admin('POST', '/internal/organisers', { body: { name: 'ok', ['x\u0000']: 1 } }),
        400,
        'invalid_argument',
      );
    });

    it('answers a non-JSON content type with 415 in the error body', async () => {
      const result = await admin('POST', '/internal/organisers', {
        rawBody: 'name=x',
        headers: { 'content-type': 'text/plain' },
      });
      assertErrorBody(result, 415, 'invalid_argument');
    });
  });

  describe('X-Request-Id', () => {
    it('tells browsers not to sniff content types, on every response', async () => {
      assert.equal(
        (await api('GET', '/v1/me', { key: organiser.key })).headers.get('x-content-type-options'),
        'nosniff',
      );
      assert.equal((await api('GET', '/nothing')).headers.get('x-content-type-options'), 'nosniff');
    });

    it('keeps an idle connection open as long as KEEP_ALIVE_TIMEOUT_SECONDS says, on both listeners', async () => {
      assert.equal((await api('GET', '/v1/me', { key: organiser.key })).headers.get('keep-alive'), 'timeout=620');
      assert.equal((await admin('GET', '/internal/instances')).headers.get('keep-alive'), 'timeout=620');
    });

    it('puts a generated X-Request-Id on every response, equal to request_id', async () => {
      const ok = await api('GET', '/v1/me', { key: organiser.key });
      assert.match(ok.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      const denied = await api('GET', '/v1/me');
      assertErrorBody(denied, 401, 'unauthorized');
      assert.notEqual(denied.headers.get('x-request-id'), ok.headers.get('x-request-id'));
    });

    it('echoes a plausible caller X-Request-Id of at most 64 characters', async () => {
      for (const id of ['abc-123', 'req_01HF.x:y', 'a'.repeat(64), 'dGVzdA+/=']) {
        const result = await api('GET', '/v1/me', { headers: { 'x-request-id': id } });
        assert.equal(result.headers.get('x-request-id'), id);
        assert.equal(result.body.request_id, id);
      }
    });

    it('replaces an implausible caller X-Request-Id with a fresh one', async () => {
      for (const id of ['a'.repeat(65), 'has space', 'quote"d', 'naïve', '<script>']) {
        const result = await api('GET', '/v1/me', { headers: { 'x-request-id': id } });
        const echoed = result.headers.get('x-request-id');
        assert.notEqual(echoed, id);
        assert.match(echoed ?? '', /^[0-9a-f-]{36}$/);
      }
    });
  });

  describe('HEAD', () => {
    it('serves HEAD wherever GET is, with the same status and headers and no body', async () => {
      const get = await api('GET', '/v1/me', { key: organiser.key });
      const head = await api('HEAD', '/v1/me', { key: organiser.key });
      assert.equal(head.status, get.status);
      assert.equal(head.text, '');
      for (const name of ['content-type', 'content-length', 'x-ratelimit-limit']) {
        assert.equal(head.headers.get(name), get.headers.get(name), name);
      }
    });

    it('answers HEAD without a key with the same 401 status and headers as GET', async () => {
      const get = await api('GET', '/v1/me');
      const head = await api('HEAD', '/v1/me');
      assert.equal(head.status, 401);
      assert.equal(head.text, '');
      // Every header but those that differ per request (its id, the date, the rate window's figures).
      const perRequest = new Set(['x-request-id', 'date', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']);
      const headersOf = (answer: typeof get): Array<[string, string]> =>
        [...answer.headers.entries()].filter(([name]) => !perRequest.has(name)).sort(([a], [b]) => a.localeCompare(b));
      assert.deepEqual(headersOf(head), headersOf(get));
      assert.ok(head.headers.get('content-length'));
      assert.ok(head.headers.get('x-request-id'));
    });
  });

  describe('405 method_not_allowed', () => {
    it('answers an unsupported method on a known path with 405 and Allow naming its methods', async () => {
      const result = await api('DELETE', '/v1/me', { key: organiser.key });
      assertErrorBody(result, 405, 'method_not_allowed');
      assert.equal(result.headers.get('allow'), 'GET, HEAD');
    });

    it('answers 405 before authentication, since the route does not exist', async () => {
      const result = await api('POST', '/v1');
      assertErrorBody(result, 405, 'method_not_allowed');
      assert.equal(result.headers.get('allow'), 'GET, HEAD');
    });

    it('answers 405 on parameterised paths and on the internal listener', async () => {
      const result = await admin('GET', '/internal/keys/key_123');
      assertErrorBody(result, 405, 'method_not_allowed');
      assert.equal(result.headers.get('allow'), 'DELETE');
    });
  });

  describe('query parameters', () => {
    it('refuses an unknown query parameter with 400 unsupported_parameter', async () => {
      const result = await api('GET', '/v1/me?verbose=1', { key: organiser.key });
      assertErrorBody(result, 400, 'unsupported_parameter');
      assert.match(result.body.message, /verbose/);
    });

    it('refuses paging parameters on an endpoint that takes none', async () => {
      assertErrorBody(await api('GET', '/v1/venues?limit=5', { key: venue.key }), 400, 'unsupported_parameter');
    });
  });

  describe('path prefix before v1', () => {
    it('routes /api/v1/me and /x/y/v1/me as /v1/me', async () => {
      const plain = await api('GET', '/v1/me', { key: organiser.key });
      for (const path of ['/api/v1/me', '/x/y/v1/me']) {
        const result = await api('GET', path, { key: organiser.key });
        assert.equal(result.status, 200, path);
        assert.deepEqual(result.body, plain.body);
      }
    });

    it('answers a create sent behind a prefix with a Location behind the same prefix, a replay included', async () => {
      const writer = await fixtures(service).organiser({ scopes: ['events:read', 'events:write'] });
      const idempotencyKey = randomUUID();
      const send = (path: string) =>
        api('POST', path, {
          key: writer.key,
          body: { startTime: '2027-05-01T10:00:00Z' },
          headers: { 'idempotency-key': idempotencyKey },
        });
      const created = await send('/api/v1/events');
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.get('location'), `/api/v1/events/${created.body.data.id}`);
      const replayed = await send('/v1/events');
      assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
      assert.equal(replayed.headers.get('location'), `/v1/events/${created.body.data.id}`);
      const followed = await api('GET', created.headers.get('location')!, { key: writer.key });
      assert.equal(followed.status, 200);
    });

    it('echoes only a prefix of plain path segments in a Location: one that looks like a host (//evil.example) is left out', async () => {
      const writer = await fixtures(service).organiser({ scopes: ['events:read', 'events:write'] });
      const created = await roundTrip(
        `${service.publicUrl}//evil.example/v1/events`,
        'POST',
        { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        JSON.stringify({ startTime: '2027-05-01T10:00:00Z' }),
      );
      assert.equal(created.status, 201, created.text);
      assert.match(created.headers.get('location') ?? '', /^\/v1\/events\/evt_/);
    });
  });

  describe('listeners', () => {
    it('never answers an internal route on the public port', async () => {
      const result = await api('POST', '/internal/organisers', {
        body: { name: 'x' },
        headers: { authorization: `Bearer ${service.adminToken}` },
      });
      assertErrorBody(result, 404, 'not_found');
    });

    it('never answers a public route on the internal port', async () => {
      assertErrorBody(await admin('GET', '/v1/me', { headers: { 'x-api-key': organiser.key } }), 404, 'not_found');
    });

    it('refuses internal requests without the admin token, or with a wrong one', async () => {
      assertErrorBody(
        await admin('POST', '/internal/organisers', { body: { name: 'x' }, token: null }),
        401,
        'unauthorized',
      );
      assertErrorBody(
        await admin('POST', '/internal/organisers', { body: { name: 'x' }, token: 'wrong-token' }),
        401,
        'unauthorized',
      );
    });
  });

  describe('API reference', () => {
    it('serves an OpenAPI 3.1 document at /openapi.json without a key', async () => {
      const result = await api('GET', '/openapi.json');
      assert.equal(result.status, 200);
      assert.equal(result.body.openapi, '3.1.0');
      assert.ok(result.body.paths['/v1/me']);
      assert.equal(result.body.paths['/internal/keys'], undefined, 'internal routes stay out of the public reference');
    });

    it('serves the same document as YAML at /openapi.yaml without a key', async () => {
      const json = await fetch(`${service.publicUrl}/openapi.json`);
      const yaml = await fetch(`${service.publicUrl}/openapi.yaml`);
      assert.equal(json.status, 200);
      assert.equal(yaml.status, 200);
      assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
      assert.match(yaml.headers.get('content-type') ?? '', /^text\/yaml/);
      assert.deepEqual(load(await yaml.text()), await json.json());
    });

    it('serialises /openapi.json and /openapi.yaml once: a change to the built document after they were first served does not reach them', async () => {
      const read = async (): Promise<string[]> =>
        Promise.all(
          ['/openapi.json', '/openapi.yaml'].map(async (path) => (await fetch(`${service.publicUrl}${path}`)).text()),
        );
      const before = await read();
      const built = service.running.app.get(OpenApiDocumentStore).get().public;
      const title = built.info.title;
      built.info.title = 'changed after the start';
      try {
        assert.deepEqual(await read(), before);
      } finally {
        built.info.title = title;
      }
    });

    it('serves a readable reference page at /docs', async () => {
      const response = await fetch(`${service.publicUrl}/docs`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await response.text(), /swagger/i);
    });
  });
});

describe('the internal listener without ADMIN_TOKEN', () => {
  it('does not start when ADMIN_TOKEN is unset outside the embedded default', async () => {
    const config = loadAppConfig({ ...loopbackSettings(await freshDatabase(), ''), ADMIN_TOKEN: '' });
    const running = await startService(config, pino({ level: 'silent' }));
    try {
      assert.equal(running.adminUrl, null);
      assert.equal((await fetch(`${running.publicUrl}/v1`)).status, 401, 'the public API still serves');
    } finally {
      await running.close();
    }
  });
});
