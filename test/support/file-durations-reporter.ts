import { writeFileSync } from 'node:fs';
import type { TestEvent } from 'node:test/reporters';

/**
 * A node:test reporter that prints, once the run ends, how long each test
 * file took, slowest first: where the suite's time goes, so speed work
 * starts from figures. run-tests.ts adds it beside the usual reporter (its
 * output goes to stderr). Each file runs as a top-level suite named after
 * it (test-batch.ts), so a file's time is that suite's.
 *
 * With TEST_DURATIONS_FILE set (`run-tests.js --record-durations`) it also
 * writes the figures there, for run-tests.ts to balance its batches with.
 */
async function* fileDurations(source: AsyncIterable<TestEvent>): AsyncGenerator<string, void> {
  const perFile = new Map<string, number>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, nesting, details } = event.data;
    if (nesting !== 0 || !name.endsWith('.js')) continue;
    perFile.set(name, (perFile.get(name) ?? 0) + details.duration_ms);
  }
  const rows = [...perFile].sort(([, a], [, b]) => b - a);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\n[test-runner] time per test file (files run in parallel batches, so these add up to more than the wall time):\n`;
  for (const [name, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${name}\n`;
  yield `${(total / 1000).toFixed(1).padStart(7)} s  in all ${rows.length} files\n`;
  const record = process.env['TEST_DURATIONS_FILE'];
  if (record !== undefined) {
    const seconds = Object.fromEntries(
      rows.sort(([a], [b]) => a.localeCompare(b)).map(([name, ms]) => [name, Math.round(ms / 100) / 10]),
    );
    writeFileSync(record, `${JSON.stringify(seconds, null, 2)}\n`);
  }
}

// node:test loads a reporter by its module's default export, which for CommonJS is module.exports itself.
export = fileDurations;
