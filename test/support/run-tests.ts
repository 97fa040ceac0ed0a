import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { embeddedPgHome } from '../../src/config/app-config';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { ensureDatabase } from '../../src/database/ensure-database';
import { generateReceiverCertificate } from './https-receiver';
import type { BatchPlan } from './test-batch';
import { planBatches } from './test-batches';
import { selectTests } from './test-selection';
import { TEMPLATE_DATABASE } from './test-database';

/**
 * `npm test` after type-check and lint: starts one real PostgreSQL server
 * for the whole run (embedded, in a throwaway folder), migrates a template
 * database once, then runs every compiled `*.spec.js` and `*.e2e-spec.js`
 * with node's test runner. Each test file clones the template into a fresh
 * database of its own, so files run in parallel without sharing rows.
 */
const distRoot = resolve(__dirname, '..', '..');
/** Batches (test processes) run at once; TEST_CONCURRENCY overrides. */
const CONCURRENCY = Number(process.env['TEST_CONCURRENCY'] ?? 3);
/** Processes the files are split into; TEST_BATCHES overrides. */
const BATCHES = Number(process.env['TEST_BATCHES'] ?? 3);
/** How long a batch may run before it counts as hung: 20 minutes. */
const BATCH_TIMEOUT_MS = 20 * 60_000;
/** Seconds per file from a recorded run (`--record-durations`), to balance the batches. */
const DURATIONS_FILE = resolve(distRoot, '..', 'test', 'support', 'test-durations.json');

function hasSource(compiled: string): boolean {
  return existsSync(join(distRoot, '..', relative(distRoot, compiled)).replace(/\.js$/, '.ts'));
}

function findTests(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    // A compiled test whose source was deleted or renamed stays in dist/; only tests with a source run.
    else if ((name.endsWith('.spec.js') || name.endsWith('.e2e-spec.js')) && hasSource(path)) found.push(path);
  }
  return found;
}

/**
 * Webhook tests deliver to an HTTPS receiver on 127.0.0.1 with a certificate
 * made for this run. Node reads NODE_EXTRA_CA_CERTS only at process start, so
 * it is set here for the test processes (and the service processes they
 * spawn), added to any bundle the caller already had.
 */
function receiverCertificateEnv(folder: string): Record<string, string> {
  const { cert } = generateReceiverCertificate(folder);
  const bundle = join(folder, 'extra-ca-bundle.pem');
  const existing = process.env['NODE_EXTRA_CA_CERTS'];
  let previous: string;
  try {
    previous = existing === undefined ? '' : `${readFileSync(existing, 'utf8').trim()}\n`;
  } catch {
    previous = '';
  }
  writeFileSync(bundle, `${previous}${cert.toString('utf8')}`);
  return { NODE_EXTRA_CA_CERTS: bundle, TEST_RECEIVER_CERT_DIR: folder };
}

/** Memory-backed filesystem where Linux has one, and the room a run's databases take there at most (about 2 GiB). */
const MEMORY_FOLDER = '/dev/shm';
const CLUSTER_ROOM_BYTES = 4 * 1024 ** 3;

/**
 * Where the run's throwaway cluster lives: in memory (/dev/shm) when it has
 * room, else beside the run's other files. Every test file clones the
 * template, some 500 files each, and an ext4 disk that deleted many files in
 * the last minutes (the previous run's cluster) searches long for each new
 * inode, so much of PostgreSQL’s CPU in the run goes to creating files. In
 * memory that cost is gone, and the run's speed does not depend on what the
 * disk did before it. TEST_PG_IN_MEMORY=0 keeps it on disk.
 */
function clusterParent(runFolder: string): string {
  if (process.env['TEST_PG_IN_MEMORY'] === '0') return runFolder;
  try {
    removeAbandonedClusters();
    const room = statfsSync(MEMORY_FOLDER);
    if (room.bavail * room.bsize >= CLUSTER_ROOM_BYTES) return mkdtempSync(join(MEMORY_FOLDER, 'events-api-test-'));
  } catch {
    // No /dev/shm (not Linux): the disk it is.
  }
  return runFolder;
}

/**
 * Memory is not given back until a folder is removed: a run killed before its
 * cleanup leaves its cluster in /dev/shm, and the next run removes it (when
 * its PostgreSQL is gone and the folder is more than a minute old, so that
 * a run starting beside it is left alone).
 */
function removeAbandonedClusters(): void {
  for (const name of readdirSync(MEMORY_FOLDER)) {
    const folder = join(MEMORY_FOLDER, name);
    if (!name.startsWith('events-api-test-') || Date.now() - statSync(folder).mtimeMs < 60_000) continue;
    if (!postmasterAlive(join(folder, 'pg'))) rmSync(folder, { recursive: true, force: true });
  }
}

function postmasterAlive(cluster: string): boolean {
  try {
    process.kill(Number(readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n')[0]), 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function secondsSince(start: number): string {
  return `${((performance.now() - start) / 1000).toFixed(1)} s`;
}

function recordedDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * One small entry file per batch, in the run's folder: node's test runner gives each its own process.
 * The plan beside them names every batch's files; a batch that runs out of its own takes the files the
 * others have not started (test-batch.ts).
 */
function writeBatchFiles(runFolder: string, files: readonly string[]): string[] {
  const byName = new Map(files.map((file) => [relative(distRoot, file), file]));
  const planned = planBatches([...byName.keys()], recordedDurations(), BATCHES);
  const claims = join(runFolder, 'claims');
  mkdirSync(claims);
  const plan: BatchPlan = { batches: planned.map((names) => names.map((name) => byName.get(name)!)), claims };
  const planFile = join(runFolder, 'batches.json');
  writeFileSync(planFile, JSON.stringify(plan));
  const batchModule = join(__dirname, 'test-batch.js');
  // First, as the service's entry points do: the in-process services load their libraries as a started one does.
  const vendorBundle = join(distRoot, 'libs', 'modules', 'use-vendor-bundle.js');
  return planned.map((_, index) => {
    const entry = join(runFolder, `batch-${index + 1}.js`);
    writeFileSync(
      entry,
      `require(${JSON.stringify(vendorBundle)});\n` +
        `require(${JSON.stringify(batchModule)}).runBatch(${JSON.stringify(planFile)}, ${index});\n`,
    );
    return entry;
  });
}

async function main(): Promise<void> {
  // `--unit`: the fast tier, the specs beside the code (no e2e files); other arguments filter by name.
  const unitOnly = process.argv.includes('--unit');
  const record = process.argv.includes('--record-durations');
  const filter = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
  const files = selectTests(
    ['src', 'libs', 'test', 'bench'].flatMap((folder) => findTests(join(distRoot, folder))),
    { projectPathOf: (file) => relative(distRoot, file), nameParts: filter, unitOnly },
  ).sort();
  const started = performance.now();
  const runFolder = mkdtempSync(join(tmpdir(), 'events-api-test-'));
  const certificateEnv = receiverCertificateEnv(runFolder);
  const clusterFolder = clusterParent(runFolder);
  const server = await startEmbeddedPostgres({
    directory: join(clusterFolder, 'pg'),
    persistent: false,
    // A clone under a 0700 folder (root's home) runs its cluster from the same home as the service would.
    home: embeddedPgHome(process.env),
    // A throwaway cluster need not survive a crash: no flush to disk on commit, checkpoint or
    // shutdown. Each test file's CREATE DATABASE otherwise waits on the disk, and so does the
    // shutdown checkpoint of every file's database at the end of the run.
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
    log: (message) => process.stderr.write(`[test-postgres] ${message}\n`),
  });
  const removeRunFolders = (): void => {
    // The run's certificate, batch files and claims, and the cluster's folder: every process that read them has exited.
    rmSync(runFolder, { recursive: true, force: true });
    rmSync(clusterFolder, { recursive: true, force: true });
  };
  let tests: ChildProcess | null = null;
  // Ctrl-C, or a CI job's time running out: the test processes stop, and the cluster's memory is given
  // back before the runner leaves.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      tests?.kill(signal);
      const leave = (): never => {
        removeRunFolders();
        process.exit(130);
      };
      setTimeout(leave, 10_000).unref();
      void server.stop().then(leave, leave);
    });
  }
  let code: number;
  try {
    await ensureDatabase(server.adminUrl, TEMPLATE_DATABASE);
    const migrator = new DataSource({ ...dataSourceOptions(server.urlFor(TEMPLATE_DATABASE)), entities: [] });
    await migrator.initialize();
    await migrator.runMigrations();
    await migrator.destroy();
    process.stderr.write(
      `[test-runner] ${files.length} test files: ${files.map((f) => relative(distRoot, f)).join(' ')}\n`,
    );
    process.stderr.write(`[test-runner] PostgreSQL started and the template migrated in ${secondsSince(started)}\n`);
    code = await new Promise<number>((resolveCode) => {
      // The usual reporter on stdout (spec on a terminal, TAP otherwise), and the time per file on stderr.
      const reporters = [
        `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
        '--test-reporter-destination=stdout',
        `--test-reporter=${join(__dirname, 'file-durations-reporter.js')}`,
        '--test-reporter-destination=stderr',
      ];
      const batches = writeBatchFiles(runFolder, files);
      // A batch is one test to the runner: the timeout only stops a hung batch. A batch takes four to five
      // minutes on an idle 2-core machine and half as long again on a busy one, so the timeout stays far
      // above that, and a slow machine is never taken for a hung batch.
      const args = [
        '--test',
        `--test-concurrency=${CONCURRENCY}`,
        `--test-timeout=${BATCH_TIMEOUT_MS}`,
        ...reporters,
        ...batches,
      ];
      const child = (tests = spawn(process.execPath, args, {
        stdio: 'inherit',
        env: {
          ...process.env,
          ...certificateEnv,
          // Through the socket: the test files' many small queries cost less CPU than over loopback TCP.
          TEST_PG_ADMIN_URL: server.socketUrlFor('postgres'),
          LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'silent',
          ...(record ? { TEST_DURATIONS_FILE: DURATIONS_FILE } : {}),
        },
      }));
      child.on('exit', (exitCode) => resolveCode(exitCode ?? 1));
    });
    process.stderr.write(`[test-runner] the test files ran in ${secondsSince(started)} after the start\n`);
  } finally {
    await server.stop();
    removeRunFolders();
  }
  process.exit(code);
}

void main().catch((error: unknown) => {
  process.stderr.write(`test runner failed: ${String(error)}\n`);
  process.exit(1);
});
