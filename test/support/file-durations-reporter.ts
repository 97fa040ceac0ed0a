import { relative, resolve } from 'node:path';
import type { TestEvent } from 'node:test/reporters';

const distRoot = resolve(__dirname, '..', '..');

/**
 * A node:test reporter that prints, once the run ends, how long each test
 * file spent in its top-level suites, slowest first: where the suite's time
 * goes, so speed work starts from figures. run-tests.ts adds it beside the
 * usual reporter (its output goes to stderr).
 */
async function* fileDurations(source: AsyncIterable<TestEvent>): AsyncGenerator<string, void> {
  const perFile = new Map<string, number>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    const name = relative(distRoot, file);
    perFile.set(name, (perFile.get(name) ?? 0) + details.duration_ms);
  }
  const rows = [...perFile].sort(([, a], [, b]) => b - a);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\n[test-runner] time per test file (its top-level suites; files run in parallel, so these add up to more than the wall time):\n`;
  for (const [name, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${name}\n`;
  yield `${(total / 1000).toFixed(1).padStart(7)} s  in all ${rows.length} files\n`;
}

// node:test loads a reporter by its module's default export, which for CommonJS is module.exports itself.
export = fileDurations;
