import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Templates and the script are not TypeScript, so the compiler does not copy
 * them to dist/: they are read from beside this file when present (a build
 * that copies them), otherwise from the source tree the build came from.
 */
export function portalFolder(name: 'views' | 'assets'): string {
  const beside = join(__dirname, name);
  if (existsSync(beside)) return beside;
  return resolve(__dirname, '..', '..', '..', 'src', 'portal', name);
}
