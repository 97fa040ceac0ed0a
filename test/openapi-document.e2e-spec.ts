import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ID_LESS_DELETE_PATHS } from '../src/common/http/id-less-delete';
import { isPortalRoute } from '../src/common/http/listener';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { ErrorCode } from '../src/common/errors/error-code';
import { RouteTable } from '../src/common/http/route-table';
import { fixtures } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { contractPath, contractSections, readContractSections } from './support/contract-tables';
import { OpenApiContract, PROBE_PATHS, REFERENCE_PATHS } from './support/openapi-contract';
import { type TestService } from './support/test-service';
import { withApp } from './support/with-app';

type Json = Record<string, any>;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let service: TestService;
let receiver: HttpsReceiver;
let publicDocument: Json;
let internalDocument: Json;
let contract: OpenApiContract;

async function lintErrors(document: Json, name: string): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: name, config });
  return problems.map(
    (problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`,
  );
}

function operationsOf(document: Json): Array<{ key: string; path: string; method: string; operation: Json }> {
  return Object.entries(document['paths'] as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path}`,
        path,
        method,
        operation: operation as Json,
      })),
  );
}

/** The route table's routes of one listener, written as the document writes them. */
function routesOf(listener: 'public' | 'admin'): string[] {
  return (
    service.running.app
      .get(RouteTable)
      .entries(listener)
      .map((route) => `${route.method} ${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`)
      .filter((route) => !REFERENCE_PATHS.test((route.split(' ')[1] ?? '').replace(/\*$/, '')))
      .filter((route) => !PROBE_PATHS.test(route.split(' ')[1] ?? ''))
      // The portal's pages answer people in HTML (docs/portal.md); they are no operation of the API.
      .filter((route) => !isPortalRoute(route.split(' ')[1] ?? ''))
      .sort()
  );
}

/** The internal contract's operation rows (Method, Path, Body, Success), each once, its body as written. */
function internalContractRows(): string[][] {
  const markdown = readFileSync(join(dirname(contractPath()), 'internal-api.md'), 'utf8');
  const rows = new Map<string, string[]>();
  for (const table of contractSections(`## Operations\n${markdown}`).flatMap((section) => section.tables)) {
    if (table.header.slice(0, 4).join('|') !== 'Method|Path|Body|Success') continue;
    for (const [method = '', path = '', body = '', success = ''] of table.rows) {
      const key = `${method} ${path}`;
      // A row that adds to an earlier one (enable's `{recover?}`) keeps the body it names.
      const bodyText = body.replace(/`/g, '') || rows.get(key)?.[2] || '';
      rows.set(key, [method, path, bodyText, success]);
    }
  }
  return [...rows.values()];
}

/** The members of `{a, b?, c: {…}, ...rest}` as the contract writes a body or an answer; `?` marks an optional one. */
function fieldsOf(text: string): Array<{ name: string; required: boolean }> {
  const inner = text.replace(/`/g, '').trim().replace(/^\{/, '').replace(/\}$/, '');
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of inner) {
    if (character === '{') depth += 1;
    if (character === '}') depth -= 1;
    if (character === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += character;
  }
  parts.push(current);
  return parts
    .map((part) => (part.split(':')[0] ?? '').trim())
    .filter((name) => name !== '' && !name.startsWith('...'))
    .map((name) => ({ name: name.replace(/\?$/, ''), required: !name.endsWith('?') }));
}

/** The members a Success cell names after "plus" or "with" in backticks (`organizerId`, `secret`). */
function namedFields(success: string): Array<{ name: string; required: boolean }> {
  const tail = /\b(?:plus|with)\b(.*)$/.exec(success)?.[1] ?? '';
  return [...tail.matchAll(/`([a-z][A-Za-z0-9]*)`/g)]
    .map((match) => match[1] ?? '')
    .filter((name) => !['null', 'true', 'false'].includes(name))
    .map((name) => ({ name, required: true }));
}

// One service for every suite of this file (the documents are read once).
const app = withApp({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '50' });
before(async () => {
  service = app.service;
  receiver = await startHttpsReceiver();
  publicDocument = (await (await fetch(`${service.publicUrl}/openapi.json`)).json()) as Json;
  const internal = await internalApi(service)('GET', '/internal/openapi.json');
  assert.equal(internal.status, 200, internal.text);
  internalDocument = internal.body;
  contract = new OpenApiContract(publicDocument);
});

after(async () => {
  await receiver.close();
});

describe('the OpenAPI documents', () => {
  it('is OpenAPI 3.1 at version 1.0.0 with the bearer scheme and the conventions as its introduction', () => {
    assert.equal(publicDocument['openapi'], '3.1.0');
    assert.equal(publicDocument['info'].version, '1.0.0');
    assert.deepEqual(publicDocument['security'], [{ bearer: [] }]);
    assert.equal(publicDocument['components'].securitySchemes.bearer.scheme, 'bearer');
    for (const topic of ['## Envelopes', '## Paging', '## Idempotency', '## ETags', '## Rate limits', '## Webhooks']) {
      assert.ok(publicDocument['info'].description.includes(topic), `introduction covers ${topic}`);
    }
  });

  it('names on each public operation the scope and the principal types of the contract’s summary table, as its security requirement, x-principals and description', () => {
    const table = readContractSections()
      .flatMap((section) => section.tables)
      .find((candidate) => candidate.header.join('|') === 'Method|Path|Scope|Principals');
    assert.ok(table, "api-v1.md has the endpoints' summary table");
    assert.ok(table.rows.length >= 12);
    for (const [method = '', path = '', scope = '', principals = ''] of table.rows) {
      const operation = publicDocument['paths'][path]?.[method.toLowerCase()] as Json | undefined;
      assert.ok(operation, `${method} ${path} is documented`);
      const scopes = scope.startsWith('none') ? [] : [scope];
      assert.deepEqual(operation['security'], [{ bearer: scopes }], `${method} ${path}: its scope`);
      const names = principals.split(',').map((name) => name.trim());
      assert.deepEqual(operation['x-principals'], names, `${method} ${path}: its principal types`);
      const said = scopes.length === 0 ? 'any valid key' : `the \`${scope}\` scope`;
      assert.ok(String(operation['description']).includes(`**Access:** ${said};`), `${method} ${path}: described`);
    }
  });

  it('has every public route of the route table as an operation, and no operation without a route', () => {
    const documented = operationsOf(publicDocument).map((op) => op.key);
    // `DELETE /v1/webhooks` and `/v1/webhooks/` (no id) are documented as the 400 of `DELETE /v1/webhooks/{webhookId}`.
    const idLess = ['DELETE /v1/webhooks', ...ID_LESS_DELETE_PATHS.map((path) => `DELETE ${path}`)];
    const routes = routesOf('public').filter((route) => !idLess.includes(route));
    assert.deepEqual([...documented].sort(), routes);
    assert.ok(contract.operationFor('DELETE', '/v1/webhooks'), 'the id-less DELETE maps to the documented operation');
    assert.ok(contract.operationFor('DELETE', '/v1/webhooks/'), 'so does its trailing-slash spelling');
  });

  it('has every internal route of the route table in the internal document, and none in the public one', () => {
    assert.deepEqual(
      operationsOf(internalDocument)
        .map((op) => op.key)
        .sort(),
      // The dashboard's HTML pages are for people, not part of the internal API the document describes.
      routesOf('admin').filter((route) => !route.split(' ')[1]?.startsWith('/internal/dashboard')),
    );
    assert.ok(operationsOf(internalDocument).every((op) => op.path.startsWith('/internal/')));
    assert.ok(!operationsOf(publicDocument).some((op) => op.path.startsWith('/internal')));
  });

  it('names the components after the contract’s resources', () => {
    const schemas = Object.keys(publicDocument['components'].schemas);
    for (const name of [
      'Event',
      'EventPatch',
      'EventPage',
      'Order',
      'OrderPage',
      'Venue',
      'VenuePage',
      'Webhook',
      'WebhookPage',
      'Principal',
      'Scope',
      'Visibility',
      'WebhookEventType',
      'Error',
    ]) {
      assert.ok(schemas.includes(name), `components.schemas.${name}`);
    }
    assert.deepEqual(publicDocument['components'].schemas.ErrorCode.enum.sort(), Object.values(ErrorCode).sort());
  });

  it('marks exactly the contract’s nullable fields as nullable', () => {
    const nullable = (schema: string): string[] =>
      Object.entries(publicDocument['components'].schemas[schema].properties as Json)
        .filter(([, property]) => JSON.stringify(property).includes('"null"'))
        .map(([name]) => name)
        .sort();
    assert.deepEqual(nullable('Event'), ['endTime', 'startTime', 'title', 'updatedAt']);
    assert.deepEqual(nullable('Order'), [
      'attributionSource',
      'billingEmail',
      'billingName',
      'createdAt',
      'eventId',
      'status',
      'updatedAt',
    ]);
    assert.deepEqual(nullable('Venue'), ['category', 'claimStatus', 'description', 'name', 'slug', 'websiteUrl']);
    assert.deepEqual(nullable('VenueLocation'), ['address', 'city', 'country', 'displayName']);
    assert.deepEqual(nullable('Webhook'), ['description', 'lastStatus']);
    assert.deepEqual(nullable('Me'), ['organizerId']);
    assert.deepEqual(nullable('EventPatch'), ['onlineMeeting', 'planning']);
  });

  it('documents on every public operation 401, 429, 500 and 503 (with Retry-After), X-Request-Id on every response, and a success example', () => {
    for (const { key, operation } of operationsOf(publicDocument)) {
      const responses = operation['responses'] as Json;
      for (const status of ['401', '429', '500', '503']) assert.ok(responses[status], `${key} documents ${status}`);
      assert.ok(
        contract.resolve(responses['503'] as Json)['headers']?.['Retry-After'],
        `${key} 503 documents Retry-After`,
      );
      assert.ok(operation['summary'] && operation['description'], `${key} has a summary and a description`);
      for (const [status, declared] of Object.entries(responses)) {
        const response = contract.resolve(declared as Json);
        assert.ok(response['headers']?.['X-Request-Id'], `${key} ${status} documents X-Request-Id`);
        if (status.startsWith('2')) {
          assert.ok(response['content']['application/json'].example !== undefined, `${key} ${status} has an example`);
        }
      }
      assert.ok(
        (operation['parameters'] as Json[]).some((p) => p['in'] === 'header' && p['name'] === 'X-Request-Id'),
        `${key} accepts X-Request-Id`,
      );
    }
    assert.ok(contract.resolve(publicDocument['components'].responses.RateLimited).headers['Retry-After']);
  });

  it('lists the exact error codes each status can carry, as the contract does for POST /v1/events', () => {
    const responses = publicDocument['paths']['/v1/events'].post.responses as Json;
    const codes = (status: string): string[] =>
      [...responses[status].content['application/json'].schema.allOf[1].properties.error.enum].sort();
    assert.deepEqual(codes('400'), ['idempotency_key_required', 'invalid_argument', 'unsupported_parameter']);
    assert.deepEqual(codes('403'), ['forbidden', 'insufficient_scope']);
    assert.deepEqual(codes('409'), ['conflict']);
    assert.ok(responses['201'].headers['Location'] && responses['201'].headers['ETag']);
    assert.ok(responses['201'].headers['Idempotent-Replayed']);
    const get = publicDocument['paths']['/v1/events/{eventId}'].get as Json;
    assert.ok(get.responses['304'].headers['ETag'], 'If-None-Match answers 304 with the ETag');
    const patch = publicDocument['paths']['/v1/events/{eventId}'].patch as Json;
    assert.ok(patch.parameters.some((p: Json) => p['name'] === 'If-Match'));
    assert.ok(patch.responses['412']);
  });

  it('documents the paging parameters with the pager’s rules', () => {
    const parameters = publicDocument['paths']['/v1/events'].get.parameters as Json[];
    const limit = parameters.find((p) => p['name'] === 'limit')!;
    assert.deepEqual(limit['schema'], { type: 'integer', minimum: 1, maximum: 100, default: 50 });
    assert.ok(parameters.some((p) => p['name'] === 'cursor'));
    assert.match(parameters.find((p) => p['name'] === 'updated_after')!['description'], /epoch milliseconds/);
  });

  it('validates every example against the schema it illustrates', () => {
    const checked: string[] = [];
    const check = (where: string, media: Json | undefined): void => {
      if (media?.['schema'] === undefined) return;
      const examples = [
        ...(media['example'] !== undefined ? [media['example']] : []),
        ...Object.values((media['examples'] ?? {}) as Json).map((example: Json) => example['value']),
      ];
      for (const example of examples) {
        assert.deepEqual(contract.schemaErrors(media['schema'], example), [], where);
        checked.push(where);
      }
    };
    for (const { key, operation } of operationsOf(publicDocument)) {
      check(`${key} body`, operation['requestBody']?.content['application/json']);
      for (const [status, response] of Object.entries(operation['responses'] as Json)) {
        check(`${key} ${status}`, contract.resolve(response as Json)['content']?.['application/json']);
      }
    }
    for (const [name, item] of Object.entries(publicDocument['webhooks'] as Json)) {
      check(`webhook ${name}`, item.post.requestBody.content['application/json']);
    }
    assert.ok(checked.length > 40, `${checked.length} examples checked`);
  });

  it('gives every example event and venue the url the service builds for it: /events/{id} and /venues/{id}', () => {
    const urls: Array<[string, string]> = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value !== null && typeof value === 'object') {
        const record = value as Record<string, unknown>;
        if (typeof record['id'] === 'string' && typeof record['url'] === 'string') {
          urls.push([record['id'], record['url']]);
        }
        Object.values(record).forEach(walk);
      }
    };
    walk(publicDocument);
    const resources = urls.filter(([id]) => /^(evt|ven)_/.test(id));
    assert.ok(resources.length >= 4, `${resources.length} example urls`);
    for (const [id, url] of resources) {
      const path = id.startsWith('evt_') ? 'events' : 'venues';
      assert.equal(new URL(url).pathname, `/${path}/${id}`, `the example url of ${id}`);
    }
  });

  it('documents 431 on every public operation, and Cache-Control: no-store on the webhook responses that carry secrets', () => {
    for (const { key, operation } of operationsOf(publicDocument)) {
      assert.ok(operation['responses']['431'], `${key} documents 431`);
    }
    for (const [path, method, status] of [
      ['/v1/webhooks', 'get', '200'],
      ['/v1/webhooks', 'post', '201'],
    ] as const) {
      const headers = publicDocument['paths'][path][method].responses[status].headers as Json;
      assert.deepEqual(headers['Cache-Control'], { $ref: '#/components/headers/Cache-Control' }, `${method} ${path}`);
    }
    assert.deepEqual(publicDocument['components'].headers['Cache-Control'].schema, {
      type: 'string',
      enum: ['no-store'],
    });
  });

  it('documents the internal refusals the internal contract gives, 429 on every internal operation, and the metrics as Prometheus text', () => {
    const refusals: Array<[string, string, string]> = [
      ['/internal/keys', 'post', '403'],
      ['/internal/keys/{keyId}', 'delete', '403'],
      ['/internal/events', 'post', '409'],
      ['/internal/events/{eventId}/publish', 'post', '409'],
      ['/internal/orders/{orderId}/confirm', 'post', '409'],
      ['/internal/webhooks/{webhookId}/deliveries/{deliveryId}/resend', 'post', '409'],
      ['/internal/webhooks/{webhookId}/recover', 'post', '409'],
      ['/internal/portal-links', 'post', '409'],
    ];
    for (const [path, method, status] of refusals) {
      const operation = internalDocument['paths'][path]?.[method] as Json | undefined;
      assert.ok(operation, `${method} ${path} is documented`);
      const response = operation['responses'][status] as Json | undefined;
      assert.ok(response, `${method} ${path} documents ${status}`);
      const code = status === '403' ? 'forbidden' : 'conflict';
      assert.deepEqual(response['content']['application/json'].schema.allOf[1].properties.error.enum, [code]);
      assert.equal(operation['x-internal-refusals'], undefined, 'the extension is turned into responses');
      assert.ok(
        Object.keys(operation['responses']).some((answer) => answer.startsWith('2')),
        'keeps its success',
      );
    }
    for (const { key, operation } of operationsOf(internalDocument)) {
      assert.ok(operation['responses']['429'], `${key} documents 429`);
    }
    const metrics = internalDocument['paths']['/internal/metrics'].get.responses['200'].content as Json;
    assert.deepEqual(Object.keys(metrics), ['text/plain; version=0.0.4; charset=utf-8']);
  });

  it('describes every internal body and success answer field by field, with the fields and statuses of the internal contract’s tables', () => {
    const resolve = (schema: Json): Json => {
      const target = schema['$ref'];
      if (typeof target !== 'string') return schema;
      return resolve(internalDocument['components'].schemas[target.split('/').at(-1) as string] as Json);
    };
    let rows = 0;
    for (const row of internalContractRows()) {
      const [method = '', path = '', body = '', success = ''] = row;
      const where = `${method} ${path}`;
      const operation = internalDocument['paths'][path]?.[method.toLowerCase()] as Json | undefined;
      assert.ok(operation, `${where} is documented`);
      const [status = ''] = /^\d{3}/.exec(success) ?? [];
      const answer = operation['responses'][status] as Json | undefined;
      assert.ok(answer, `${where} documents its success status ${status}`);
      const media = answer['content']?.['application/json'] as Json | undefined;
      assert.ok(media, `${where}: its success body is documented`);
      const envelope = resolve(media['schema'] as Json);
      assert.deepEqual(envelope['required'], ['data'], `${where}: the {data} envelope`);
      const data = resolve(envelope['properties'].data as Json);
      const item = data['type'] === 'array' ? resolve(data['items'] as Json) : data;
      assert.ok(Object.keys(item['properties'] ?? {}).length > 0, `${where}: the answer's fields are described`);
      const successFields = success.startsWith(`${status} \`{data:`)
        ? []
        : [...fieldsOf(/^\d{3} (`\{[^`]*\}`)/.exec(success)?.[1] ?? ''), ...namedFields(success)].map(
            ({ name }) => name,
          );
      for (const name of successFields) {
        assert.ok(item['properties'][name], `${where}: the answer has ${name}`);
      }
      if (body !== '') {
        const request = resolve(operation['requestBody']?.content['application/json'].schema ?? {});
        const fields = fieldsOf(body);
        for (const { name } of fields) assert.ok(request['properties']?.[name], `${where}: the body has ${name}`);
        assert.deepEqual(
          [...((request['required'] as string[] | undefined) ?? [])].sort(),
          fields
            .filter((field) => field.required)
            .map((field) => field.name)
            .sort(),
          `${where}: required body fields`,
        );
      }
      rows += 1;
    }
    assert.ok(rows >= 20, `${rows} rows of the internal contract checked`);
  });

  it('sends Cache-Control: no-store with every internal answer that carries a credential: a new key, a subscription’s secret, a portal link', async () => {
    const make = fixtures(service);
    const admin = internalApi(service);
    const owner = await make.organiser({ scopes: ['webhooks:write'] });
    const hook = await make.webhook(owner.key, `${receiver.origin}/no-store`, ['order.confirmed']);
    const answers = {
      key: await admin('POST', '/internal/keys', {
        body: { principal: { type: 'organiser', id: owner.id }, actorRole: 'owner' },
      }),
      detail: await admin('GET', `/internal/webhooks/${hook.id}`),
      enable: await admin('POST', `/internal/webhooks/${hook.id}/enable`),
      rotate: await admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, { body: { graceSeconds: 0 } }),
      portalLink: await admin('POST', '/internal/portal-links', { body: { accountId: owner.id } }),
    };
    for (const [name, answer] of Object.entries(answers)) {
      assert.ok(answer.status >= 200 && answer.status < 300, `${name}: ${answer.text}`);
      assert.equal(answer.headers.get('cache-control'), 'no-store', name);
    }
  });

  it('serves the internal document only on the admin listener, only with the admin token', async () => {
    const onPublic = await publicApi(service)('GET', '/internal/openapi.json');
    assert.equal(onPublic.status, 404);
    const withoutToken = await internalApi(service)('GET', '/internal/openapi.json', { token: null });
    assert.equal(withoutToken.status, 401);
    assert.equal(internalDocument['openapi'], '3.1.0');
    assert.deepEqual(internalDocument['security'], [{ adminToken: [] }]);
  });
});

describe('the reference page', () => {
  it('serves /docs with every asset from the service itself (no CDN) and the conventions in the document', async () => {
    const page = await fetch(`${service.publicUrl}/docs`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, asset = '']) => asset);
    assert.ok(assets.length >= 3, `${assets.length} assets`);
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(?:https?:)?\/\//, `${asset} is served locally`);
      const url = new URL(asset, `${service.publicUrl}/docs`);
      assert.equal((await fetch(url)).status, 200, url.pathname);
    }
    const init = await (await fetch(`${service.publicUrl}/docs/swagger-ui-init.js`)).text();
    assert.match(init, /## Idempotency/, 'the reference opens with the conventions');
  });

  it('serves under /docs/ only the assets the reference page loads: the stock index.html, source maps, licences and package.json answer 404', async () => {
    for (const name of [
      '',
      'index.html',
      'swagger-ui-bundle.js.map',
      'swagger-ui.css.map',
      'package.json',
      'LICENSE',
      'oauth2-redirect.html',
      'swagger-initializer.js',
      'swagger-ui-es-bundle.js',
    ]) {
      const answer = await publicApi(service)('GET', `/docs/${name}`);
      assert.equal(answer.status, 404, name);
      assert.equal(answer.body?.error, ErrorCode.NotFound, name);
      // Said as every route miss is, and the same for HEAD: its Content-Length is the GET's.
      assert.match(answer.body?.message ?? '', /^No resource at /, name);
      const head = await fetch(`${service.publicUrl}/docs/${name}`, { method: 'HEAD' });
      assert.equal(head.headers.get('content-length'), answer.headers.get('content-length'), `HEAD ${name}`);
    }
    const bundle = await fetch(`${service.publicUrl}/docs/swagger-ui-bundle.js`);
    assert.equal(bundle.status, 200);
  });

  it('may not be framed by another site, since a key may be pasted into it: frame-ancestors none and X-Frame-Options DENY', async () => {
    // `/%64ocs` is routed as `/docs`: the page written percent-encoded is the same page.
    for (const path of ['/docs', '/docs/swagger-ui-init.js', '/docs/swagger-ui.css', '/%64ocs']) {
      const response = await fetch(`${service.publicUrl}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-security-policy'), "frame-ancestors 'none'", path);
      assert.equal(response.headers.get('x-frame-options'), 'DENY', path);
    }
    const api = await fetch(`${service.publicUrl}/openapi.json`);
    assert.equal(api.headers.get('x-frame-options'), null, 'only the reference page');
  });

  it('keeps no key given to the reference page: Swagger UI stores no authorization in the browser, whose storage the portal’s origin shares', async () => {
    const init = await (await fetch(`${service.publicUrl}/docs/swagger-ui-init.js`)).text();
    assert.match(init, /"persistAuthorization":\s*false/);
  });
});

describe('the webhooks section', () => {
  it('describes order.confirmed and event.published with the envelope, headers and 2xx acknowledgement', () => {
    const webhooks = publicDocument['webhooks'] as Json;
    assert.deepEqual(Object.keys(webhooks).sort(), ['event.published', 'order.confirmed']);
    for (const hook of Object.values(webhooks)) {
      const headers = (hook.post.parameters as Json[]).map((p) => p['name']);
      for (const name of ['Service-Signature', 'Service-Event', 'Service-Delivery', 'User-Agent']) {
        assert.ok(headers.includes(name), name);
      }
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'traceparent']) {
        assert.ok(headers.includes(name), name);
      }
      assert.ok(hook.post.responses['2XX']);
    }
  });

  it('matches what a real subscription receives: envelope, data and headers of both deliveries', async () => {
    const make = fixtures(service);
    const api = publicApi(service);
    const admin = internalApi(service);
    const owner = await make.organiser({ scopes: ['events:read', 'events:write', 'webhooks:write'] });
    const hook = await api('POST', '/v1/webhooks', {
      key: owner.key,
      body: { url: `${receiver.origin}/hooks`, events: ['order.confirmed', 'event.published'] },
    });
    assert.equal(hook.status, 201, hook.text);
    const event = await api('POST', '/v1/events', {
      key: owner.key,
      headers: { 'idempotency-key': 'openapi-webhooks' },
      body: { title: { en: 'Delivered' }, startTime: '2027-05-01T19:00:00Z' },
    });
    assert.equal(event.status, 201, event.text);
    assert.equal((await admin('POST', `/internal/events/${event.body.data.id}/publish`)).status, 200);
    const order = await admin('POST', '/internal/orders', {
      body: { eventId: event.body.data.id, status: 'confirmed', lineItems: [{ quantity: 2 }], totalAmountMinor: 4500 },
    });
    assert.equal(order.status, 201, order.text);

    const received = await receiver.waitFor((requests) => requests.length >= 2);
    const webhooks = publicDocument['webhooks'] as Json;
    for (const request of received) {
      const post = webhooks[request.body.type].post as Json;
      assert.deepEqual(
        contract.schemaErrors(post.requestBody.content['application/json'].schema, request.body),
        [],
        request.body.type,
      );
      for (const parameter of post.parameters as Json[]) {
        // The Standard Webhooks headers arrive with the webhook-operations work; the contract's four are checked here.
        if (!/^Service-|^User-Agent$/.test(parameter['name'])) continue;
        const value = request.headers[parameter['name'].toLowerCase()];
        assert.equal(typeof value, 'string', `${parameter['name']} sent`);
        assert.deepEqual(contract.schemaErrors(parameter['schema'], value), [], parameter['name']);
      }
    }
    assert.deepEqual(received.map((request) => request.body.type).sort(), ['event.published', 'order.confirmed']);
  });
});

describe('the response check of the test client', () => {
  const observed = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    method: 'GET',
    url: '/v1/me',
    status,
    headers: new Headers({ 'x-request-id': 'abc', 'content-type': 'application/json', ...headers }),
    text: JSON.stringify(body),
  });
  const me = {
    principal: { type: 'organiser', id: 'org_1' },
    organizerId: 'org_1',
    scopes: ['events:read'],
    apiVersion: 'v1',
    keyPrefix: 'svc_live_abc…',
  };

  it('accepts a documented response', () => {
    assert.deepEqual(contract.problems(observed(200, { data: me })), []);
  });

  it('refuses an undocumented status', () => {
    assert.match(contract.problems(observed(418, { data: me })).join(), /status not documented/);
  });

  it('refuses a drifted body shape', () => {
    assert.match(contract.problems(observed(200, me)).join(), /must have required property 'data'/);
    assert.match(
      contract.problems(observed(200, { data: { ...me, scopes: ['everything'] } })).join(),
      /allowed values/,
    );
  });

  it('refuses an error code the status does not document', () => {
    const body = { error: 'not_found', message: 'x', request_id: 'abc' };
    assert.match(contract.problems(observed(400, body)).join(), /allowed values/);
  });

  it('refuses a missing required header and an undocumented contract header', () => {
    const noId = { ...observed(200, { data: me }), headers: new Headers({ 'content-type': 'application/json' }) };
    assert.match(contract.problems(noId).join(), /required header x-request-id missing/);
    assert.match(
      contract.problems(observed(200, { data: me }, { etag: '"x"' })).join(),
      /etag sent but not documented/,
    );
  });

  it('expects 404 or 405 with the Error body for a route the document does not have', () => {
    const error = { error: 'method_not_allowed', message: 'x', request_id: 'abc' };
    const put = { ...observed(405, error, { allow: 'GET, HEAD' }), method: 'PUT' };
    assert.deepEqual(contract.problems(put), []);
    assert.match(contract.problems({ ...put, status: 200 }).join(), /405 was expected/);
    assert.match(
      contract.problems({ ...put, headers: new Headers({ 'x-request-id': 'abc' }) }).join(),
      /Allow missing/,
    );
  });
});

// Last: linting keeps this process (which also runs the service) busy for
// seconds, and a keep-alive socket idle that long may be reset under the
// next request.
describe('the lint of the documents', () => {
  it('passes the Redocly recommended lint with zero problems (public document)', async () => {
    assert.deepEqual(await lintErrors(publicDocument, 'openapi.json'), []);
  });

  it('passes the Redocly recommended lint with zero problems (internal document)', async () => {
    assert.deepEqual(await lintErrors(internalDocument, 'internal-openapi.json'), []);
  });
});
