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
  const failures: string[] = [];
  // Several files run in one batch process, so the test file of a failure is its top-level suite's name.
  const specOfBatch = new Map<string | undefined, string>();
  for await (const event of source) {
    if (event.type === 'test:start' && event.data.nesting === 0) specOfBatch.set(event.data.file, event.data.name);
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, nesting, details } = event.data;
    if (event.type === 'test:fail' && isOwnFailure(event.data.details.error)) {
      failures.push(
        `${specOfBatch.get(event.data.file) ?? event.data.file ?? '?'} › ${name}: ${failureMessage(event.data.details.error)}`,
      );
    }
    if (nesting !== 0 || !name.endsWith('.js')) continue;
    perFile.set(name, (perFile.get(name) ?? 0) + details.duration_ms);
  }
  const rows = [...perFile].sort(([, a], [, b]) => b - a);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\n[test-runner] time per test file (files run in parallel batches, so these add up to more than the wall time):\n`;
  for (const [name, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${name}\n`;
  yield `${(total / 1000).toFixed(1).padStart(7)} s  in all ${rows.length} files\n`;
  // Repeated last, where a CI log's tail shows it: which tests failed, and why in one line each.
  if (failures.length > 0) {
    yield `\n[test-runner] ${failures.length} failed:\n`;
    for (const failure of failures) yield `  ✖ ${failure}\n`;
  }
  const record = process.env['TEST_DURATIONS_FILE'];
  if (record !== undefined) {
    const seconds = Object.fromEntries(
      rows.sort(([a], [b]) => a.localeCompare(b)).map(([name, ms]) => [name, Math.round(ms / 100) / 10]),
    );
    writeFileSync(record, `${JSON.stringify(seconds, null, 2)}\n`);
  }
}

/** A suite that failed only because a test inside it did is not a failure of its own. */
function isOwnFailure(error: Error & { failureType?: string }): boolean {
  return error.failureType !== 'subtestsFailed';
}

/** The assertion's own message (node:test wraps it as the cause), on one line, at most 300 characters. */
function failureMessage(error: Error): string {
  const cause: unknown = error.cause;
  const message = cause instanceof Error ? cause.message : error.message;
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

// node:test loads a reporter by its module's default export, which for CommonJS is module.exports itself.
export = fileDurations;
