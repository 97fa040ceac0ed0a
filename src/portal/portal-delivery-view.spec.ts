import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptView, excerptOf } from './portal-delivery-view';

describe('the portal attempt view', () => {
  const base = {
    at: '2026-11-23T18:00:00.000Z',
    durationMs: 42,
    trigger: 'scheduled' as const,
    httpStatus: null,
    responseExcerpt: null,
  };

  it('reads the HTTP status from an outcome of digits, and none from a timeout or network error', () => {
    assert.equal(attemptView({ ...base, outcome: 503 }).httpStatus, 503);
    assert.equal(attemptView({ ...base, outcome: 'timeout' }).httpStatus, null);
    assert.equal(attemptView({ ...base, outcome: 'network_error' }).httpStatus, null);
  });

  it('shows the recorded status and body excerpt when the attempt log has them, and null when it does not', () => {
    const recorded = attemptView({ ...base, outcome: 500, httpStatus: 500, responseExcerpt: 'down for upkeep' });
    assert.equal(recorded.responseExcerpt, 'down for upkeep');
    assert.equal(recorded.httpStatus, 500);
    assert.equal(attemptView({ ...base, outcome: 500 }).responseExcerpt, null);
  });

  it('shows at most the first 1 KiB of a response body, never half a character', () => {
    assert.equal(Buffer.byteLength(excerptOf('x'.repeat(5000))), 1024);
    const cut = excerptOf(`${'x'.repeat(1023)}é and more`);
    assert.equal(cut, 'x'.repeat(1023));
  });
});
