import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const PACKAGE_JSON = resolve(__dirname, '..', '..', '..', 'package.json');

/** `npm start`'s command line: `[NAME=value …] node [flags] …main.js`, split into its parts. */
function startCommand(packageJson: string): { environment: Record<string, string>; nodeFlags: string[] } {
  const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: Record<string, string> };
  const words = (scripts['start'] ?? '').split(/\s+/).filter((word) => word !== '');
  const node = words.indexOf('node');
  const script = words.findIndex((word) => word.endsWith('main.js'));
  const assignments = words.slice(0, Math.max(node, 0));
  if (node < 0 || script < node || !assignments.every((word) => /^[A-Z_][A-Z0-9_]*=\S*$/.test(word))) {
    throw new Error(`package.json's start script is not "[NAME=value …] node [flags] …main.js"`);
  }
  const environment = Object.fromEntries(
    assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  return { environment, nodeFlags: words.slice(node + 1, script) };
}

/**
 * The Node flags `npm start` runs the service with, read from package.json's
 * `start` script (the words between `node` and the script), so the benchmarks
 * measure the service exactly as it is started, with one place to change them.
 */
export function serviceNodeFlags(packageJson = PACKAGE_JSON): string[] {
  return startCommand(packageJson).nodeFlags;
}

/** The environment `npm start` sets before `node` (such as MALLOC_ARENA_MAX), read from the same script. */
export function serviceStartEnvironment(packageJson = PACKAGE_JSON): Record<string, string> {
  return startCommand(packageJson).environment;
}
