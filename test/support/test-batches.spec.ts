import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planBatches } from './test-batches';

describe('planBatches', () => {
  const files = ['a.js', 'b.js', 'c.js', 'd.js', 'e.js', 'f.js', 'g.js'];
  const seconds = { 'a.js': 30, 'b.js': 20, 'c.js': 10, 'd.js': 9, 'e.js': 1, 'f.js': 1 };

  it('puts every test file in exactly one batch, whatever the recorded figures', () => {
    for (const count of [1, 2, 3, 7, 20]) {
      const batches = planBatches(files, count === 3 ? {} : seconds, count);
      assert.deepEqual(batches.flat().sort(), files, `with ${count} batches`);
      assert.ok(batches.length <= Math.min(count, files.length));
      assert.ok(batches.every((batch) => batch.length > 0));
    }
  });

  it('balances by recorded time: the slowest files go to different batches, heaviest batch first', () => {
    // g.js has no recorded time, so it counts as the median (10 s): 30 + 10 + 1 against 20 + 10 + 9 + 1.
    const batches = planBatches(files, seconds, 2);
    assert.deepEqual(batches, [
      ['a.js', 'g.js', 'f.js'],
      ['b.js', 'c.js', 'd.js', 'e.js'],
    ]);
  });

  it('counts a file without a recorded time as a typical file, not as free', () => {
    const batches = planBatches(['new.js', 'x.js', 'y.js'], { 'x.js': 5, 'y.js': 5 }, 2);
    assert.deepEqual(
      batches.map((batch) => batch.length),
      [2, 1],
    );
  });
});
