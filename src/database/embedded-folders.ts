import { createHash } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * As root, the embedded server runs as the `postgres` OS user, which must be
 * able to reach ("search", o+x) every folder leading to its binaries and its
 * data. The service changes permissions only inside its own folders (the
 * application folder, the data folder and its home for the embedded server);
 * a folder outside them that the user cannot pass is reported, never changed.
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
    'and the service changes no permission outside its own folders: put EMBEDDED_PG_HOME and DATA_DIR ' +
    'under folders others may search (such as /var/lib or /srv), run as a non-root user, or set DATABASE_URL'
  );
}

/** The binaries of one PostgreSQL version, copied into the home when their place in node_modules is out of reach. */
export function placedBinariesFolder(home: string, version: string): string {
  return join(resolve(home), 'postgres', version);
}

/**
 * Where the cluster of `directory` lives when a folder the service does not
 * own blocks the postgres OS user's way to it: in the home, one folder per
 * requested path, with `directory` left as a symbolic link to it so the
 * documented place still leads to the data.
 */
export function placedClusterDirectory(home: string, directory: string): string {
  const id = createHash('sha256').update(resolve(directory)).digest('hex').slice(0, 16);
  return join(resolve(home), 'clusters', id, 'pg');
}

export interface RootPlacement {
  /** True when the binaries are copied into the home. */
  placeBinaries: boolean;
  /** True when the cluster is placed in the home, with `directory` linked to it. */
  placeCluster: boolean;
  /** Folders outside the service's own ones that made a placement necessary. */
  blocked: string[];
  /** Own folders granted search permission so the binaries or the cluster stay where they are. */
  grant: string[];
}

export interface RootPlacementInput {
  /** The folder of the binaries inside node_modules. */
  binaries: string;
  applicationFolder: string;
  /** The requested cluster folder (`DATA_DIR/pg`); its parent is the data folder. */
  directory: string;
}

/**
 * Decides, from folder modes only, what a root start does: binaries and
 * cluster stay where they are when the postgres OS user can reach them
 * (search permission granted inside own folders), and move into the home when
 * a folder the service does not own is in the way.
 */
export function planRootPlacement(
  input: RootPlacementInput,
  modeOf: (path: string) => number = (path) => statSync(path).mode,
): RootPlacement {
  const binaryPlan = planRootAccess(
    ['bin', 'lib', 'share'].map((name) => join(input.binaries, name)),
    [input.applicationFolder],
    modeOf,
  );
  const dataFolder = dirname(resolve(input.directory));
  const dataPlan = planRootAccess([dataFolder], [input.applicationFolder, dataFolder], modeOf);
  const placeBinaries = binaryPlan.blocked.length > 0;
  const placeCluster = dataPlan.blocked.length > 0;
  return {
    placeBinaries,
    placeCluster,
    blocked: [...new Set([...binaryPlan.blocked, ...dataPlan.blocked])],
    grant: [...new Set([...(placeBinaries ? [] : binaryPlan.grant), ...(placeCluster ? [] : dataPlan.grant)])],
  };
}
