import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceNodeFlags } from './service-node-flags';

describe('serviceNodeFlags', () => {
  it('gives the benchmarks the Node flags of npm start: the young generation and the old generation’s growth capped for the memory target, and young-generation collections on the main thread for the CPU target', () => {
    assert.deepEqual(serviceNodeFlags(), [
      '--max-semi-space-size=6',
      '--heap-growing-percent=10',
      '--no-parallel-scavenge',
    ]);
  });
});
