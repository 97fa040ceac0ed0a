import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Templates and assets are not TypeScript, so the compiler does not copy
 * them to dist/: they are read from beside the compiled file when present (a
 * build that copies them), otherwise from the source tree the build came
 * from. `unit` is the folder under src/ that owns them.
 */
export function sourceFolder(compiledDir: string, unit: string, name: string): string {
  const beside = join(compiledDir, name);
  if (existsSync(beside)) return beside;
  const parts = unit.split('/');
  // dist/src/<unit> lies as many folders below the root as the unit has parts, plus two.
  const root = resolve(compiledDir, ...parts.map(() => '..'), '..', '..');
  return join(root, 'src', ...parts, name);
}

/**
 * The stylesheet, icon and scripts the server-rendered pages share (the
 * dashboard's and the portal's): the copy button, and the guard that sends a
 * form once while its answer is pending.
 */
export function sharedPageAssets(): { css: Buffer; favicon: Buffer; copyButton: Buffer; submitOnce: Buffer } {
  const folder = sourceFolder(__dirname, 'common/html', 'assets');
  return {
    css: readFileSync(join(folder, 'pages.css')),
    favicon: readFileSync(join(folder, 'favicon.svg')),
    copyButton: readFileSync(join(folder, 'copy-button.js')),
    submitOnce: readFileSync(join(folder, 'submit-once.js')),
  };
}
