import { describe } from 'node:test';
import { relative, resolve } from 'node:path';

const distRoot = resolve(__dirname, '..', '..');

/**
 * Runs several compiled test files in this one process, each as a top-level
 * suite named after its file. Loading Nest, TypeORM and the rest costs a
 * test process about 1.6 s of CPU; paid once per batch instead of once per
 * file, that is most of the suite's CPU saved on a 2-core machine.
 *
 * Each file is required inside its own suite's callback, so the hooks a file
 * declares at its top level (`before`, `after`) belong to that file's suite
 * and never run around another file's tests. Files in one batch run one
 * after the other; batches run in parallel (run-tests.ts).
 */
export function runFilesAsSuites(files: readonly string[]): void {
  for (const file of files) {
    describe(relative(distRoot, file), () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the file must load synchronously inside its suite's callback, which import() cannot do
      require(file);
    });
  }
}
