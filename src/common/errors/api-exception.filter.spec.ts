import { NotFoundException } from '@nestjs/common';
import { RouteMiss } from '../http/route-miss';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadAppConfig } from '../../config/app-config';
import { RouteTable } from '../http/route-table';
import { ApiExceptionFilter } from './api-exception.filter';
import { DomainError } from './domain-error';
import { ErrorCode } from './error-code';

function hostFor() {
  const logged: unknown[] = [];
  const sent: { status?: number; body?: unknown; headers?: Record<string, string> } = {};
  const request = {
    id: 'req-1',
    url: '/v1/me',
    method: 'GET',
    raw: {},
    log: { error: (...args: unknown[]) => logged.push(args) },
  };
  const reply = {
    sent: false,
    status(code: number) {
      sent.status = code;
      return this;
    },
    headers(values: Record<string, string>) {
      sent.headers = values;
      return this;
    },
    send(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  return { host: new ExecutionContextHost([request, reply]), logged, sent };
}

describe('ApiExceptionFilter', () => {
  const filter = new ApiExceptionFilter(new RouteTable(), loadAppConfig({}));

  it('turns an unexpected exception into a logged 500 internal that leaks nothing', () => {
    const { host, logged, sent } = hostFor();
    filter.catch(
      new Error('duplicate key value violates unique constraint "api_key_hash_key" SELECT * FROM api_key'),
      host,
    );
    assert.equal(sent.status, 500);
    const body = sent.body as { error: string; message: string; request_id: string };
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'request_id']);
    assert.equal(body.error, 'internal');
    assert.equal(body.request_id, 'req-1');
    assert.doesNotMatch(body.message, /api_key|SELECT|constraint/);
    assert.equal(logged.length, 1);
  });

  it('maps a domain error to its code and status without logging it as a failure', () => {
    const { host, logged, sent } = hostFor();
    filter.catch(new DomainError(ErrorCode.LimitReached, 'Ten subscriptions already exist.'), host);
    assert.equal(sent.status, 409);
    assert.deepEqual(sent.body, {
      error: 'limit_reached',
      message: 'Ten subscriptions already exist.',
      request_id: 'req-1',
    });
    assert.equal(logged.length, 0);
  });

  it('answers a route miss on a known path with 405 and Allow', () => {
    const routes = new RouteTable();
    routes.record('GET', '/v1/me');
    const { host, sent } = hostFor();
    new ApiExceptionFilter(routes, loadAppConfig({})).catch(new RouteMiss(), host);
    assert.equal(sent.status, 405);
    assert.deepEqual(sent.headers, { allow: 'GET, HEAD' });
  });

  it("answers a handler's NotFoundException with 404, never as a route miss with 405", () => {
    const routes = new RouteTable();
    routes.record('GET', '/v1/me');
    const { host, sent } = hostFor();
    new ApiExceptionFilter(routes, loadAppConfig({})).catch(new NotFoundException('No such thing.'), host);
    assert.equal(sent.status, 404);
    assert.deepEqual(sent.body, { error: 'not_found', message: 'No such thing.', request_id: 'req-1' });
  });
});
