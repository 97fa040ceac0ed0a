import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The `version` of the service's package.json (the nearest one above this file), what an instance says it runs. */
export function serviceVersion(): string {
  for (let folder = __dirname; ; folder = dirname(folder)) {
    try {
      const parsed = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version?: unknown };
      if (typeof parsed.version === 'string') return parsed.version;
    } catch {
      // none here: look one folder up
    }
    if (dirname(folder) === folder) return 'unknown';
  }
}
