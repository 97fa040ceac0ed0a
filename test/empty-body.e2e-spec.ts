import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { before, describe, it } from 'node:test';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { acceptsFormBodies } from '../src/common/http/listener';
import { RouteTable } from '../src/common/http/route-table';
import { bodyUseOf, type BodyUse } from '../src/common/validation/validated-body';
import { type Organiser } from './support/fixtures';
import { withApp } from './support/with-app';

/** How a client may send "nothing" while still declaring JSON. */
const EMPTY_FRAMINGS: Record<string, Record<string, string>> = {
  'Content-Length: 0': { 'content-length': '0' },
  'chunked with no data': { 'transfer-encoding': 'chunked' },
  'no length at all': {},
};

interface Answer {
  status: number;
  text: string;
}

/** One raw request, so that the framing of the (empty) body is exactly the one asked for. */
function send(base: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, base), { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    request.on('error', reject);
    if (headers['transfer-encoding'] === undefined && headers['content-length'] === undefined && body === '') {
      // Node adds `Transfer-Encoding: chunked` to a request it is still writing; end() with nothing sends neither.
      request.end();
      return;
    }
    request.end(body);
  });
}

function joinPath(...parts: Array<string | undefined>): string {
  return `/${parts
    .filter((part): part is string => part !== undefined && part !== '' && part !== '/')
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .join('/')}`;
}

const app = withApp();
let organiser: Organiser;
/** `METHOD /path/:param` to what its handler does with a body, read from every controller of the running app. */
let bodyUse: Map<string, BodyUse>;

before(async () => {
  organiser = await app.make.organiser({
    scopes: ['events:read', 'events:write', 'orders:read', 'webhooks:read', 'webhooks:write'],
  });
  bodyUse = new Map();
  const nest = app.service.running.app;
  const scanner = nest.get(MetadataScanner);
  for (const wrapper of nest.get(DiscoveryService).getControllers()) {
    const type = wrapper.metatype as (abstract new (...args: never[]) => unknown) | null;
    if (type === null || wrapper.instance === undefined) continue;
    const prototype = type.prototype as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as object;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const path = joinPath(Reflect.getMetadata(PATH_METADATA, type), Reflect.getMetadata(PATH_METADATA, handler));
      bodyUse.set(`${RequestMethod[method]} ${path}`, bodyUseOf(prototype, name));
    }
  }
});

/** Every route of both listeners that can carry a body, with a concrete path and the credential it expects. */
function writeRoutes(): Array<{ key: string; method: string; url: string; base: string; token: string }> {
  const table = app.service.running.app.get(RouteTable);
  return (['public', 'admin'] as const).flatMap((listener) =>
    table
      .entries(listener)
      .filter((route) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method))
      .map((route) => ({
        key: `${route.method} ${route.path}`,
        method: route.method,
        url: route.path.replace(/:[A-Za-z0-9_]+/g, 'no-such-id'),
        base: listener === 'public' ? app.service.publicUrl : app.service.adminUrl,
        token: listener === 'public' ? organiser.key : app.service.adminToken,
      })),
  );
}

describe('an empty body is no body', () => {
  it('answers every operation that takes no body, sent with Content-Type: application/json and no body, as if no body was sent', async () => {
    const routes = writeRoutes().filter(
      // The dashboard's and the portal's forms are urlencoded and read from the request itself: an empty JSON body is refused there.
      (route) => !acceptsFormBodies(route.key.split(' ')[1] ?? '') && bodyUse.get(route.key) !== 'required',
    );
    const keys = routes.map((route) => route.key);
    for (const expected of ['DELETE /v1/webhooks/:webhookId', 'POST /internal/events/:eventId/publish']) {
      assert.ok(keys.includes(expected), `${expected} is among the operations without a body`);
    }
    const problems: string[] = [];
    for (const route of routes) {
      for (const [framing, headers] of Object.entries(EMPTY_FRAMINGS)) {
        const answer = await send(route.base, route.method, route.url, {
          ...headers,
          'content-type': 'application/json',
          authorization: `Bearer ${route.token}`,
        });
        if ((answer.status === 400 && /request body/i.test(answer.text)) || answer.status >= 413) {
          problems.push(`${route.key} (${framing}) → ${answer.status} ${answer.text}`);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(routes.length >= 10, `${routes.length} operations without a body checked`);
  });

  it('still refuses an empty JSON body on every operation that requires one', async () => {
    const routes = writeRoutes().filter((route) => bodyUse.get(route.key) === 'required');
    assert.ok(routes.some((route) => route.key === 'POST /v1/events'));
    for (const route of routes) {
      const answer = await send(route.base, route.method, route.url, {
        'content-length': '0',
        'content-type': 'application/json',
        authorization: `Bearer ${route.token}`,
      });
      assert.equal(answer.status, 400, `${route.key}: ${answer.text}`);
      assert.match(answer.text, /The request body is empty but declared as JSON\./, route.key);
    }
  });

  it('documents the body of every operation that takes an optional one as not required', async () => {
    const internal = await app.admin('GET', '/internal/openapi.json');
    assert.equal(internal.status, 200, internal.text);
    const optional = [...bodyUse].filter(([, use]) => use === 'optional').map(([route]) => route);
    assert.ok(optional.includes('POST /internal/webhooks/:webhookId/enable'));
    for (const route of optional) {
      const [method = '', path = ''] = route.split(' ');
      const operation = internal.body.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
      assert.equal(operation?.requestBody?.required, false, route);
    }
  });

  it('still parses and checks a body that is present on an operation that takes none', async () => {
    const base = app.service.publicUrl;
    const remove = (body: string): Promise<Answer> =>
      send(
        base,
        'DELETE',
        '/v1/webhooks/no-such-id',
        {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          authorization: `Bearer ${organiser.key}`,
        },
        body,
      );
    const invalid = await remove('{not json');
    assert.equal(invalid.status, 400, invalid.text);
    assert.match(invalid.text, /"error":"invalid_argument".*The request body is not valid JSON\./);
    const notAnObject = await remove('[]');
    assert.equal(notAnObject.status, 400, notAnObject.text);
    assert.match(notAnObject.text, /The request body must be a JSON object\./);
    const blank = await remove(' ');
    assert.equal(blank.status, 400, blank.text);
    assert.match(blank.text, /The request body is not valid JSON\./);
  });
});
