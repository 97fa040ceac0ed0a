import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The `version` of package.json, read once: what an instance says it runs in the registry. */
export function serviceVersion(): string {
  // From dist/src/instances (or src/instances under ts-node) the package root is three folders up, or two.
  for (const root of [join(__dirname, '..', '..', '..'), join(__dirname, '..', '..')]) {
    try {
      const parsed = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
      if (typeof parsed.version === 'string') return parsed.version;
    } catch {
      // not this folder
    }
  }
  return 'unknown';
}
