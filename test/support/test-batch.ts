import { closeSync, openSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe } from 'node:test';

const distRoot = resolve(__dirname, '..', '..');

/** What run-tests.ts writes for its batches: every batch's files (compiled paths), and where claims go. */
export interface BatchPlan {
  batches: string[][];
  /** A folder: a file is claimed by creating the file named after its place in the plan there. */
  claims: string;
}

/** Exclusive create: exactly one process gets each file, whoever asks first. */
function claim(claims: string, id: number): boolean {
  try {
    closeSync(openSync(join(claims, String(id)), 'wx'));
    return true;
  } catch {
    return false;
  }
}

/** The other batches' files from the end of their lists (their shortest), one batch after another in turn. */
function stealOrder(batches: readonly string[][], own: number): string[] {
  const tails = batches.filter((_, index) => index !== own).map((files) => [...files].reverse());
  const order: string[] = [];
  for (let depth = 0; tails.some((tail) => depth < tail.length); depth += 1)
    for (const tail of tails) if (depth < tail.length) order.push(tail[depth]!);
  return order;
}

/**
 * Runs test files in this process, each as a top-level suite named after its
 * file. Loading Nest, TypeORM and the rest costs a test process about 1.6 s
 * of CPU; paid once per batch instead of once per file, that is most of the
 * suite's CPU saved on a 2-core machine.
 *
 * Each file is required inside its own suite's callback, so the hooks a file
 * declares at its top level (`before`, `after`) belong to that file's suite
 * and never run around another file's tests. Files in one process run one
 * after the other; batches run in parallel (run-tests.ts). A batch runs its
 * own planned files first, then the files other batches have not started yet
 * (from their shortest): a file that took longer than recorded (a wait for a
 * fresh rate window, a busy machine) does not leave the other processes
 * idle at the end while its batch still has files queued behind it.
 */
export function runBatch(planFile: string, index: number): void {
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as BatchPlan;
  const ids = new Map(plan.batches.flat().map((file, id) => [file, id]));
  const queue = [...(plan.batches[index] ?? []), ...stealOrder(plan.batches, index)];
  void (async () => {
    for (const file of queue) {
      if (!claim(plan.claims, ids.get(file)!)) continue;
      await describe(relative(distRoot, file), () => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- the file must load synchronously inside its suite's callback, which import() cannot do
        require(file);
      });
    }
  })();
}
