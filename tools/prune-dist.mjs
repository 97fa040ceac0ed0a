/**
 * Removes from dist/ what tsc emitted for a source that no longer exists.
 * tsc only ever adds and overwrites, and the service loads some of its
 * output by pattern (migrations, entities): a migration deleted or renamed
 * in src/ would otherwise still be applied from its old compiled file. Runs
 * after every compile (`npm run build`, `npm run compile`, `npm test`).
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What tsc writes for one `x.ts`: `x.js` and its source map. */
const EMITTED = /\.js(\.map)?$/;

/** Removes every emitted file under `root`/dist whose `.ts` source under `root` is gone; returns their paths. */
export function pruneDist(root) {
  const dist = join(root, 'dist');
  const removed = [];
  const visit = (folder) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      // dist/vendor is the libraries' bundle (tools/bundle-vendor.mjs), which has no source of its own.
      if (path === join(dist, 'vendor')) continue;
      if (statSync(path).isDirectory()) visit(path);
      else if (EMITTED.test(name)) {
        const source = join(root, relative(dist, path)).replace(EMITTED, '.ts');
        if (!existsSync(source)) {
          rmSync(path);
          removed.push(relative(root, path));
        }
      }
    }
  };
  if (existsSync(dist)) visit(dist);
  return removed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const removed = pruneDist(dirname(dirname(fileURLToPath(import.meta.url))));
  if (removed.length > 0) process.stderr.write(`removed ${removed.length} compiled files whose source is gone\n`);
}
