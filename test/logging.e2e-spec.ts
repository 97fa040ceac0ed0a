import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { captureLog } from './support/captured-log';
import { type Organiser } from './support/fixtures';
import { publicApi } from './support/http-client';
import { type TestService } from './support/test-service';
import { withApp } from './support/with-app';

describe('JSON logs', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let organiser: Organiser;
  const log = captureLog();
  const lines = log.lines;

  const app = withApp({ LOG_LEVEL: 'info' }, { logTo: log.stream });
  before(async () => {
    ({ service, api } = app);
    organiser = await app.make.organiser({ scopes: ['events:read', 'events:write'] });
  });

  it('writes one JSON line per request carrying its request id', async () => {
    await api('GET', '/v1/me', { key: organiser.key, headers: { 'x-request-id': 'log-check-1' } });
    const line = lines.find((entry) => entry['reqId'] === 'log-check-1');
    assert.ok(line, 'a request line with the request id');
    assert.equal(line['statusCode'], 200);
    assert.equal(line['url'], '/v1/me');
  });

  it('gives lines written by services during a request that request’s id', async () => {
    const body = (title: string) => ({ startTime: '2027-01-01T10:00:00Z', title: { en: title } });
    await api('POST', '/v1/events', { key: organiser.key, body: body('A'), headers: { 'idempotency-key': 'reused' } });
    await api('POST', '/v1/events', {
      key: organiser.key,
      body: body('B'),
      headers: { 'idempotency-key': 'reused', 'x-request-id': 'log-check-2' },
    });
    const warning = lines.find((entry) => String(entry['msg']).includes('Idempotency-Key reused'));
    assert.ok(warning, 'the service logged the reuse');
    assert.equal(warning['reqId'], 'log-check-2');
  });

  it('logs at start where each listener listens, the public one and the admin one', () => {
    const said = lines.map((entry) => String(entry['msg']));
    assert.ok(
      said.some((msg) => msg.includes(`listening at ${service.publicUrl}`)),
      'the public listener',
    );
    assert.ok(
      said.some((msg) => msg === `Admin listener listening at ${service.adminUrl}`),
      'the admin listener',
    );
  });

  it('never logs an API key or the admin token', () => {
    assert.ok(lines.length > 5);
    assert.ok(!log.text().includes(organiser.key.slice(9, 49)), 'no API key');
    assert.ok(!log.text().includes(service.adminToken), 'no admin token');
  });
});
