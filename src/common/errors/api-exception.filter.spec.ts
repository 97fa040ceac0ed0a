import { NotFoundException } from '@nestjs/common';
import { RouteMiss } from '../http/route-miss';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadAppConfig } from '../../config/app-config';
import { FORM_ADDRESS_ONLY, HtmlSections, type SectionRefusal } from '../html/html-sections';
import { RouteTable } from '../http/route-table';
import { ApiExceptionFilter } from './api-exception.filter';
import { DomainError } from './domain-error';
import { ErrorCode } from './error-code';

function hostFor(url = '/v1/me') {
  const logged: unknown[] = [];
  const sent: { status?: number; body?: unknown; headers?: Record<string, string> } = {};
  const request = {
    id: 'req-1',
    url,
    method: 'GET',
    headers: {},
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
  const filter = new ApiExceptionFilter(new RouteTable(), new HtmlSections(), loadAppConfig({}));

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
    new ApiExceptionFilter(routes, new HtmlSections(), loadAppConfig({})).catch(new RouteMiss(), host);
    assert.equal(sent.status, 405);
    assert.deepEqual(sent.headers, { allow: 'GET, HEAD' });
  });

  it("answers a handler's NotFoundException with 404, never as a route miss with 405", () => {
    const routes = new RouteTable();
    routes.record('GET', '/v1/me');
    const { host, sent } = hostFor();
    new ApiExceptionFilter(routes, new HtmlSections(), loadAppConfig({})).catch(
      new NotFoundException('No such thing.'),
      host,
    );
    assert.equal(sent.status, 404);
    assert.deepEqual(sent.body, { error: 'not_found', message: 'No such thing.', request_id: 'req-1' });
  });

  it("answers under a section's path with that section's page, a route miss in people's words, and elsewhere with the JSON body", () => {
    const routes = new RouteTable();
    routes.record('POST', '/portal/subscriptions/:webhookId/enable');
    const sections = new HtmlSections();
    const shown: SectionRefusal[] = [];
    sections.add({
      base: '/portal',
      listener: 'public',
      showRefusal: (_request, _reply, refusal) => void shown.push(refusal),
    });
    const filter = new ApiExceptionFilter(routes, sections, loadAppConfig({}));
    const onPortal = hostFor('/portal/subscriptions/wh_1/enable');
    filter.catch(new RouteMiss(), onPortal.host);
    assert.deepEqual(shown, [{ status: 405, message: FORM_ADDRESS_ONLY, headers: { allow: 'POST' } }]);
    assert.deepEqual(onPortal.sent.headers, { allow: 'POST' });
    assert.equal(onPortal.sent.body, undefined, 'no JSON body');
    const elsewhere = hostFor('/portalish');
    filter.catch(new RouteMiss(), elsewhere.host);
    assert.equal(shown.length, 1);
    assert.deepEqual(Object.keys(elsewhere.sent.body as object).sort(), ['error', 'message', 'request_id']);
  });
});
