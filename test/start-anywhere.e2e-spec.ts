import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planRootAccess } from '../src/database/embedded-folders';
import { startServiceProcess, type ServiceProcess } from './support/service-process';

const repository = resolve(__dirname, '..', '..');
/** What a start needs from a clone: the build, the dependencies, the dashboard sources, the manifest. */
const APPLICATION_PARTS = ['dist', 'node_modules', 'src', 'package.json'];
const NOT_ROOT = userInfo().uid !== 0 && 'the postgres OS user placement and a start as another user need root';
if (NOT_ROOT !== false) process.stderr.write(`SKIPPED start-anywhere tests: ${NOT_ROOT}\n`);

/** A folder of the test's own that every user may search. */
function openFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(folder, 0o755);
  return folder;
}

function demoOrganiserKey(output: string): string {
  const key = /organiser org_\w+\s+key (svc_live_[0-9a-f]{48})/.exec(output)?.[1];
  assert.ok(key, output);
  return key;
}

async function overviewStatus(service: ServiceProcess, key: string): Promise<number> {
  return (await fetch(`${service.publicUrl}/v1`, { headers: { authorization: `Bearer ${key}` } })).status;
}

async function stopService(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGTERM');
  assert.equal(await service.exited, 0, service.output());
}

/** A server left behind by a killed service is stopped by its process id, read from its own pid file. */
function stopLeftoverServer(cluster: string): void {
  try {
    const pid = Number(readFileSync(join(cluster, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (pid > 0) process.kill(pid, 'SIGQUIT');
  } catch {
    // No pid file: no server runs there.
  }
}

describe('the embedded default starts wherever the clone lives', { skip: NOT_ROOT }, () => {
  const cleanups: Array<() => void> = [];
  let running: ServiceProcess | undefined;
  after(() => {
    running?.child.kill('SIGKILL');
    for (const cleanup of cleanups.reverse()) cleanup();
  });

  describe('as root, from a clone under a 0700 folder', () => {
    // A clone in root's home: the application folder is reached through a folder only root may search.
    // Node resolves modules by their real path, so the symlinked parts keep that path only with --preserve-symlinks.
    let outside = '';
    let application = '';
    let dataDir = '';
    let home = '';
    let env: Record<string, string> = {};
    let options = {};
    let organiserKey = '';
    let binariesInode = 0;

    before(() => {
      outside = mkdtempSync(join(tmpdir(), 'events-api-home-'));
      const homeParent = openFolder('events-api-pg-home-');
      cleanups.push(() => {
        stopLeftoverServer(join(dataDir, 'pg'));
        rmSync(outside, { recursive: true, force: true });
        rmSync(homeParent, { recursive: true, force: true });
      });
      chmodSync(outside, 0o700);
      application = join(outside, 'app');
      dataDir = join(application, '.data');
      home = join(homeParent, 'events-api');
      env = { DATA_DIR: dataDir, EMBEDDED_PG_HOME: home, DATABASE_URL: '', LOG_LEVEL: 'info' };
      options = {
        entry: join(application, 'dist', 'src', 'main.js'),
        nodeFlags: ['--preserve-symlinks', '--preserve-symlinks-main'],
      };
      mkdirSync(application, { mode: 0o755 });
      for (const part of APPLICATION_PARTS) symlinkSync(join(repository, part), join(application, part));
    });

    it('copies the binaries and places the cluster in its home, says so in one line, and answers GET /v1', async () => {
      running = await startServiceProcess(env, options);
      const output = running.output();
      organiserKey = demoOrganiserKey(output);
      assert.equal(await overviewStatus(running, organiserKey), 200);

      const said = output.split('\n').filter((line) => line.includes('the postgres OS user cannot pass'));
      assert.equal(said.length, 1, output);
      assert.match(said[0] ?? '', new RegExp(`cannot pass ${outside}: .*${home}/postgres/.* and keeps the cluster in`));
      const versions = readdirSync(join(home, 'postgres'));
      assert.equal(versions.length, 1, `one copy, no temporary folder left: ${versions.join(', ')}`);
      const binaries = join(home, 'postgres', versions[0] ?? '');
      assert.ok(existsSync(join(binaries, 'bin', 'postgres')));
      binariesInode = statSync(binaries).ino;
      assert.ok(lstatSync(join(dataDir, 'pg')).isSymbolicLink());
      assert.match(readlinkSync(join(dataDir, 'pg')), new RegExp(`^${home}/clusters/[0-9a-f]{16}/pg$`));
      await stopService(running);
    });

    it('changes no mode outside its own folders: the 0700 folder above the clone keeps its mode', () => {
      assert.equal(statSync(outside).mode & 0o777, 0o700);
      assert.equal(planRootAccess([application], [application]).blocked[0], outside);
    });

    it('a restart reuses the same cluster and the same copy of the binaries', async () => {
      running = await startServiceProcess(env, options);
      const output = running.output();
      assert.doesNotMatch(output, /initialising a new PostgreSQL cluster/);
      assert.doesNotMatch(output, /svc_live_/, 'the demo data exists already');
      assert.match(output, /Admin token\s+kept in /);
      assert.equal(await overviewStatus(running, organiserKey), 200, 'the same demo organiser');
      assert.equal(statSync(join(home, 'postgres', readdirSync(join(home, 'postgres'))[0] ?? '')).ino, binariesInode);
      await stopService(running);
    });
  });

  describe('as a non-root user', () => {
    let user = { uid: 0, gid: 0 };
    let dataDir = '';
    let home = '';
    let application = repository;

    before(() => {
      const dataParent = openFolder('events-api-user-data-');
      dataDir = join(dataParent, 'data');
      home = join(dataParent, 'unused-home');
      cleanups.push(() => {
        stopLeftoverServer(join(dataDir, 'pg'));
        rmSync(dataParent, { recursive: true, force: true });
      });
      const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
      user = { uid: id('-u'), gid: id('-g') };
      mkdirSync(dataDir, { mode: 0o755 });
      chownSync(dataDir, user.uid, user.gid);
      // A clone the user cannot reach (root's home) is mirrored by hard links into a folder it can.
      const parts = APPLICATION_PARTS.map((part) => join(repository, part));
      if (planRootAccess(parts, []).blocked.length > 0) {
        application = openFolder('events-api-user-app-');
        cleanups.push(() => rmSync(application, { recursive: true, force: true }));
        try {
          execFileSync('cp', ['-al', ...parts, application]);
        } catch {
          execFileSync('cp', ['-a', ...parts, application]);
        }
      }
    });

    it('runs PostgreSQL as that user with nothing moved, and answers GET /v1', async () => {
      running = await startServiceProcess(
        {
          DATA_DIR: dataDir,
          EMBEDDED_PG_HOME: home,
          DATABASE_URL: '',
          LOG_LEVEL: 'info',
          HOME: dataDir,
          NODE_EXTRA_CA_CERTS: '',
        },
        { entry: join(application, 'dist', 'src', 'main.js'), user, cwd: dataDir },
      );
      const output = running.output();
      assert.equal(await overviewStatus(running, demoOrganiserKey(output)), 200);
      assert.doesNotMatch(output, /cannot pass/);
      assert.ok(!lstatSync(join(dataDir, 'pg')).isSymbolicLink(), 'the cluster is where it was asked for');
      assert.equal(statSync(join(dataDir, 'pg', 'PG_VERSION')).uid, user.uid, 'the server runs as that user');
      assert.ok(!existsSync(home), 'a non-root start needs no home');
      await stopService(running);
    });
  });
});
