import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The Node flags `npm start` runs the service with, read from package.json's
 * `start` script (the words between `node` and the script), so the benchmarks
 * measure the service exactly as it is started, with one place to change them.
 */
export function serviceNodeFlags(packageJson = resolve(__dirname, '..', '..', '..', 'package.json')): string[] {
  const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: Record<string, string> };
  const words = (scripts['start'] ?? '').split(/\s+/).filter((word) => word !== '');
  const script = words.findIndex((word) => word.endsWith('main.js'));
  if (words[0] !== 'node' || script < 0) throw new Error(`package.json's start script is not "node [flags] …main.js"`);
  return words.slice(1, script);
}
