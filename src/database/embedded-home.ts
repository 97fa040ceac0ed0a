import {
  chmodSync,
  constants,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { blockedFoldersMessage, placedBinariesFolder, planRootAccess } from './embedded-folders';

/**
 * The home of the embedded server as root (EMBEDDED_PG_HOME): a folder the
 * service owns, which the postgres OS user can reach. Its folders are made
 * searchable here; a folder above it that blocks the way is reported.
 */
export function ensureHome(home: string, ...subfolders: string[]): void {
  for (const folder of [home, ...subfolders.map((name) => join(home, name))]) {
    mkdirSync(folder, { recursive: true, mode: 0o755 });
    // The creation mode is filtered by the umask; the home's folders need o+rx whatever it is.
    chmodSync(folder, statSync(folder).mode | 0o755);
  }
  const plan = planRootAccess([home], [home]);
  if (plan.blocked.length > 0) throw new Error(blockedFoldersMessage(plan.blocked));
}

/** Gives others read access (and search on folders) in a tree the service just copied into its home. */
function makeReadable(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    chmodSync(path, stat.mode | 0o555);
    for (const name of readdirSync(path)) makeReadable(join(path, name));
    return;
  }
  const executable = (stat.mode & constants.S_IXUSR) !== 0;
  chmodSync(path, stat.mode | (executable ? 0o555 : 0o444));
}

/**
 * Copies the binaries once per version. The copy is made in a temporary
 * folder and renamed into place, so a process starting at the same time never
 * sees half a copy: whichever rename comes second finds the folder there and
 * discards its own copy.
 */
export function placeBinaries(home: string, source: string, version: string): string {
  const target = placedBinariesFolder(home, version);
  if (existsSync(join(target, 'bin', 'postgres'))) return target;
  mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
  const temporary = mkdtempSync(join(dirname(target), `.${version}-`));
  try {
    // verbatimSymlinks: the libraries' relative links must keep pointing inside the copy.
    cpSync(source, temporary, { recursive: true, verbatimSymlinks: true });
    makeReadable(temporary);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    if (!existsSync(join(target, 'bin', 'postgres'))) throw error;
  }
  return resolve(target);
}
