/**
 * Which test files a run takes: every one, or those whose path inside the
 * project (`test/start.e2e-spec.js`, `src/webhooks/…`) contains one of the
 * name parts given. Never the checkout's own path: in a clone at
 * `/work/portal-fix`, `portal` must not select every file.
 */
export function selectTests(
  files: readonly string[],
  options: { projectPathOf: (file: string) => string; nameParts: readonly string[]; unitOnly: boolean },
): string[] {
  const { projectPathOf, nameParts, unitOnly } = options;
  return files
    .filter((file) => !unitOnly || !file.endsWith('.e2e-spec.js'))
    .filter((file) => nameParts.length === 0 || nameParts.some((part) => projectPathOf(file).includes(part)));
}
