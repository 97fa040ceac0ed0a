import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run bench`: runs every compiled `bench/*.bench.js` in its own process,
 * one after the other (they each start their own database and would skew
 * each other's figures if run together). Extra arguments filter by name.
 */
const filters = process.argv.slice(2);
const all = readdirSync(__dirname)
  .filter((name) => name.endsWith('.bench.js'))
  .sort();
// A name that matches no bench is a typo: said, with the names there are, instead of a run of nothing that passes.
const unmatched = filters.filter((filter) => !all.some((name) => name.includes(filter)));
if (unmatched.length > 0) {
  const names = all.map((name) => name.replace(/\.bench\.js$/, '')).join(', ');
  process.stderr.write(`no bench is named ${unmatched.join(' or ')}; the benches: ${names}\n`);
  process.exit(2);
}
const benches = all.filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)));
let failed = 0;
for (const bench of benches) {
  process.stderr.write(`[bench] ${bench}\n`);
  const result = spawnSync(process.execPath, [join(__dirname, bench)], { stdio: 'inherit' });
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
