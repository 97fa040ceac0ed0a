import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { heapGrowingPercentFor } from './heap-growth';

void describe('heap growth by role', () => {
  void it('npm start caps the old generation’s growth at 10% for every instance', () => {
    const packageJson = resolve(__dirname, '..', '..', '..', 'package.json');
    const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: Record<string, string> };
    assert.match(scripts['start'] ?? '', /^node .*--heap-growing-percent=10 .*dist\/src\/main\.js$/);
  });

  void it('a delivery worker lets its heap grow 40% between full collections; an instance that serves the API keeps the cap', () => {
    assert.equal(heapGrowingPercentFor({ serviceRole: 'worker', runBackgroundWork: true }), 40);
    assert.equal(heapGrowingPercentFor({ serviceRole: 'api', runBackgroundWork: true }), null);
    assert.equal(heapGrowingPercentFor({ serviceRole: 'all', runBackgroundWork: true }), null);
  });
});
