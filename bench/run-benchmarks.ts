import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run bench`: runs every compiled `bench/*.bench.js` in its own process,
 * one after the other (they each start their own database and would skew
 * each other's figures if run together). Extra arguments filter by name.
 */
const filters = process.argv.slice(2);
const benches = readdirSync(__dirname)
  .filter((name) => name.endsWith('.bench.js'))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();
let failed = 0;
for (const bench of benches) {
  process.stderr.write(`[bench] ${bench}\n`);
  const result = spawnSync(process.execPath, [join(__dirname, bench)], { stdio: 'inherit' });
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
