import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceNodeFlags } from './service-node-flags';

describe('serviceNodeFlags', () => {
  it('gives the benchmarks the Node flags of npm start, which cap the young generation and the old generation’s growth for the memory target', () => {
    assert.deepEqual(serviceNodeFlags(), ['--max-semi-space-size=8', '--heap-growing-percent=25']);
  });
});
