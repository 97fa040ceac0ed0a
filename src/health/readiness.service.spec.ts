import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { workerStaleAfterMs } from './readiness.service';

describe('delivery worker staleness', () => {
  it('a worker loop is stale after three missed sweeps', () => {
    assert.equal(workerStaleAfterMs(60_000), 180_000);
  });

  it('a worker loop is never stale in under 30 seconds, however short the poll', () => {
    assert.equal(workerStaleAfterMs(50), 30_000);
    assert.equal(workerStaleAfterMs(1_000), 30_000);
  });
});
