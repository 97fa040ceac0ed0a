/**
 * How run-tests.ts splits the test files into batches, one process each:
 * longest expected time first onto the batch with the least so far (the
 * classic LPT rule), so batches end close together and the last one to
 * finish is not the one that drew every slow file. Batches come back
 * heaviest first, because node runs files (here: batches) in the order given.
 *
 * `expectedSeconds` comes from a recorded run; a file it does not name
 * (a new one) counts as a typical file. The plan only affects speed: every
 * file is in exactly one batch whatever the figures say.
 */
export function planBatches(
  files: readonly string[],
  expectedSeconds: Readonly<Record<string, number>>,
  batchCount: number,
): string[][] {
  const known = Object.values(expectedSeconds).sort((a, b) => a - b);
  const typical = known.length === 0 ? 1 : (known[Math.floor(known.length / 2)] ?? 1);
  const weightOf = (file: string): number => expectedSeconds[file] ?? typical;
  const batches = Array.from({ length: Math.max(1, Math.min(batchCount, files.length)) }, () => ({
    files: [] as string[],
    seconds: 0,
  }));
  const byWeight = [...files].sort((a, b) => weightOf(b) - weightOf(a) || a.localeCompare(b));
  for (const file of byWeight) {
    const lightest = batches.reduce((best, batch) => (batch.seconds < best.seconds ? batch : best));
    lightest.files.push(file);
    lightest.seconds += weightOf(file);
  }
  return batches
    .filter((batch) => batch.files.length > 0)
    .sort((a, b) => b.seconds - a.seconds)
    .map((batch) => batch.files);
}
