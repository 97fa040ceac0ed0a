import assert from 'node:assert/strict';
import type { HttpResult } from './http-client';

/**
 * Asserts the whole error body: exactly `{error, message, request_id}`, the
 * expected status and code, a non-empty message, and `request_id` equal to
 * the `X-Request-Id` header.
 */
export function assertErrorBody(result: HttpResult, status: number, code: string): void {
  assert.equal(result.status, status, `expected ${status} ${code}, got ${result.status}: ${result.text}`);
  const body = result.body as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message', 'request_id']);
  assert.equal(body['error'], code);
  assert.equal(typeof body['message'], 'string');
  assert.ok((body['message'] as string).length > 0);
  assert.equal(body['request_id'], result.headers.get('x-request-id'));
}
