import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { childServer, stopServerProcess } from './server-stop';

/** The OS user the server runs as: null for the current one, else the ids of the `postgres` OS user (as root). */
export type RunAs = { uid: number; gid: number } | null;

export interface PostgresProcessOptions {
  /** Folder of the binaries (`bin`, `lib`, `share`). */
  binaries: string;
  directory: string;
  runAs: RunAs;
  /** `-c name=value` settings. */
  settings: Record<string, string>;
  log: (message: string) => void;
  /**
   * The server leads a process group of its own: a terminal's Ctrl-C, which
   * signals the whole foreground group, reaches only its owner, which stops
   * it last (the service drains first). Only for owners that stop it on
   * their own signals; others leave it in their group, so that it stops
   * with them.
   */
  ownProcessGroup?: boolean;
}

/** Messages in English whatever the machine's locale: readiness is read from the server's output. */
const MESSAGES_LOCALE = 'C';
const READY = 'database system is ready to accept connections';

function run(binary: string, args: string[], options: PostgresProcessOptions): Promise<void> {
  return new Promise((done, fail) => {
    // The folder the process starts in must be one the server's OS user can enter.
    const child = spawn(binary, args, {
      ...(options.runAs ?? {}),
      cwd: '/',
      env: { ...process.env, LC_MESSAGES: MESSAGES_LOCALE },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.once('error', fail);
    child.once('close', (code) => (code === 0 ? done() : fail(new Error(`${binary} failed (${code}): ${errors}`))));
  });
}

/**
 * Creates the cluster: the folder belongs to the server's OS user, and the
 * superuser password reaches initdb through a file only that user can read,
 * removed at once.
 */
export async function initialiseCluster(options: PostgresProcessOptions, password: string): Promise<void> {
  mkdirSync(options.directory, { recursive: true, mode: 0o700 });
  const passwordFile = join(dirname(options.directory), `.initdb-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    if (options.runAs !== null) {
      chownSync(options.directory, options.runAs.uid, options.runAs.gid);
      chownSync(passwordFile, options.runAs.uid, options.runAs.gid);
    }
    await run(
      join(options.binaries, 'bin', 'initdb'),
      [
        `--pgdata=${options.directory}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        `--lc-messages=${MESSAGES_LOCALE}`,
        '--encoding=UTF8',
      ],
      options,
    );
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

export interface PostgresProcess {
  /** Fast shutdown; resolves once the server has exited, or has answered no shutdown in time (stopServerProcess). */
  stop(): Promise<void>;
}

/** Runs the server on `port` and resolves once it accepts connections. */
export function startPostgres(options: PostgresProcessOptions, port: number): Promise<PostgresProcess> {
  const args = ['-D', options.directory, '-p', String(port)];
  for (const [name, value] of Object.entries(options.settings)) args.push('-c', `${name}=${value}`);
  const child = spawn(join(options.binaries, 'bin', 'postgres'), args, {
    ...(options.runAs ?? {}),
    detached: options.ownProcessGroup === true,
    cwd: '/',
    env: { ...process.env, LC_MESSAGES: MESSAGES_LOCALE },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((ready, fail) => {
    let output = '';
    let started = false;
    child.stderr.on('data', (chunk: Buffer) => {
      if (started) return;
      output += chunk.toString('utf8');
      if (output.includes(READY)) {
        started = true;
        ready({
          async stop(): Promise<void> {
            await stopServerProcess(childServer(child, exited), options.log);
          },
        });
      }
    });
    child.once('error', fail);
    child.once('exit', (code) => {
      if (!started) {
        options.log(`postgres: exited with ${code} before it was ready`);
        fail(new Error(`PostgreSQL did not start (exit ${code}): ${output}`));
      }
    });
  });
}
