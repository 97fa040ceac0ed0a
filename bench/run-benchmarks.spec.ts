import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

void describe('npm run bench', () => {
  it('refuses a name that matches no bench, exiting 2 with the names there are, and runs nothing', () => {
    const result = spawnSync(process.execPath, [join(__dirname, 'run-benchmarks.js'), 'deliverys'], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /^no bench is named deliverys; the benches: .*\bdeliveries\b.*\bside-by-side\b/);
    assert.doesNotMatch(result.stderr, /\[bench\]/, 'no bench started');
  });
});
