import { createHash } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * As root, the embedded server runs as the `postgres` OS user, which must be
 * able to reach ("search", o+x) every folder leading to its binaries and its
 * data. The service changes permissions only inside its own folders (the
 * application folder and the data folder); a folder outside them that the
 * user cannot pass is reported, never changed.
 */
export interface RootAccessPlan {
  /** Own folders lacking o+x: granted search permission. */
  grant: string[];
  /** Folders outside the service's own ones that the postgres OS user cannot pass. */
  blocked: string[];
}

function isWithin(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export function planRootAccess(
  targets: string[],
  ownFolders: string[],
  modeOf: (path: string) => number = (path) => statSync(path).mode,
): RootAccessPlan {
  const own = ownFolders.map((folder) => resolve(folder));
  const grant = new Set<string>();
  const blocked = new Set<string>();
  for (const target of targets) {
    for (let current = resolve(target); ; current = dirname(current)) {
      if ((modeOf(current) & constants.S_IXOTH) === 0) {
        (own.some((folder) => isWithin(current, folder)) ? grant : blocked).add(current);
      }
      if (dirname(current) === current) break;
    }
  }
  return { grant: [...grant], blocked: [...blocked] };
}

export function blockedFoldersMessage(blocked: string[]): string {
  return (
    `the postgres OS user (PostgreSQL refuses to run as root) cannot reach ${blocked.join(', ')}, ` +
    'and the service changes no permission outside its own folders: put the application and DATA_DIR ' +
    'under folders others may search (such as /srv or /opt), run as a non-root user, or set DATABASE_URL'
  );
}

/**
 * Where the cluster of `directory` lives when a folder the service does not
 * own blocks the postgres OS user's way to it: inside the application folder
 * (which the binaries already require to be reachable), one folder per
 * requested path, with `directory` left as a symbolic link to it so the
 * documented place still leads to the data.
 */
export function relocatedClusterDirectory(applicationFolder: string, directory: string): string {
  const id = createHash('sha256').update(resolve(directory)).digest('hex').slice(0, 16);
  return join(resolve(applicationFolder), '.data', 'embedded-clusters', id, 'pg');
}
