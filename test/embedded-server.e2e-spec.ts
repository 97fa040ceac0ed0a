import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { embeddedPgHome } from '../src/config/app-config';
import { openEmbeddedDefault } from '../src/database/embedded-default';
import { eventually } from './support/eventually';
import { startServiceProcess, type ServiceProcess } from './support/service-process';

const portOf = (url: string): number => Number(new URL(url).port);

/** The postmaster's pid, from the cluster's postmaster.pid. */
function postmasterOf(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

function runs(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops a service with SIGTERM, as an operator does: its exit code. */
async function stopped(service: ServiceProcess): Promise<number | null> {
  service.child.kill('SIGTERM');
  return service.exited;
}

async function ready(service: ServiceProcess): Promise<boolean | undefined> {
  const answer = await fetch(`${service.publicUrl}/readyz`).catch(() => null);
  return answer?.status === 200 ? true : undefined;
}

describe("the embedded default's server", () => {
  const workFolder = mkdtempSync(join(tmpdir(), 'events-api-embedded-'));
  // Ours to open: the cluster stays in the data folder (start.e2e-spec.ts says why).
  chmodSync(workFolder, 0o755);
  const running: ServiceProcess[] = [];
  const start = async (dataDir: string): Promise<ServiceProcess> => {
    const service = await startServiceProcess({
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    running.push(service);
    return service;
  };
  after(async () => {
    for (const service of running) {
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
      await service.exited;
    }
    // A server a failed test left behind (an instance killed above leaves it running) is stopped before its folder goes.
    const pidFile = join(workFolder, 'kept', 'pg', 'postmaster.pid');
    if (existsSync(pidFile)) {
      const server = postmasterOf(join(workFolder, 'kept'));
      if (runs(server)) process.kill(server, 'SIGINT');
      await eventually(async () => (runs(server) ? undefined : true), 'the server left behind to stop').catch(
        () => undefined,
      );
    }
    rmSync(workFolder, { recursive: true, force: true });
  });

  it("keeps the port of its data folder's last server across restarts while it is free, and takes another when it is taken", async () => {
    const dataDir = join(workFolder, 'port');
    const open = () => openEmbeddedDefault(dataDir, embeddedPgHome(process.env), () => undefined);
    const first = await open();
    await first.stop();
    const again = await open();
    try {
      assert.equal(portOf(again.url), portOf(first.url), 'the same port after a restart');
      assert.equal(readFileSync(join(dataDir, 'pg-url'), 'utf8').trim(), first.url, 'pg-url unchanged');
    } finally {
      await again.stop();
    }
    const holder = createServer();
    await new Promise<void>((listening) => holder.listen(portOf(first.url), '127.0.0.1', listening));
    try {
      const moved = await open();
      await moved.stop();
      assert.notEqual(portOf(moved.url), (holder.address() as AddressInfo).port, 'a port taken meanwhile is not used');
    } finally {
      await new Promise((closed) => holder.close(closed));
    }
  });

  const dataDir = join(workFolder, 'kept');
  /** The killed instance's start, and its replacement's, for the test after the takeover's. */
  const replaced = { killed: '', replacement: '' };

  it('takes over the server a killed instance left running on its data folder, and stops it on shutdown like one it started', async () => {
    const killed = await start(dataDir);
    killed.child.kill('SIGKILL');
    await killed.exited;
    const server = postmasterOf(dataDir);
    assert.ok(runs(server), 'a killed instance leaves its server running');

    const replacement = await start(dataDir);
    replaced.killed = killed.output();
    replaced.replacement = replacement.output();
    assert.match(replacement.output(), /was running with no instance to stop it .*: this instance runs it now/);
    assert.equal(postmasterOf(dataDir), server, 'the same server, taken over');
    assert.equal(await stopped(replacement), 0, replacement.output());
    assert.ok(!runs(server), `the server it took over is stopped:\n${replacement.output()}`);
    assert.ok(!existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'stopped cleanly');
  });

  it('does not count the killed instance it replaces on its data folder as another instance: it removes its row', () => {
    const killedId = /registered as instance ([0-9a-f-]{36})/.exec(replaced.killed)?.[1];
    assert.ok(killedId !== undefined, replaced.killed);
    assert.match(replaced.replacement, new RegExp(`removed instance ${killedId} from the registry: its process`));
    // The memory store's warning names the other instances serving the API: there are none.
    assert.doesNotMatch(replaced.replacement, /other instance\(s\) serve the API/, replaced.replacement);
  });

  let runner: ServiceProcess | undefined;

  it('says once that the server it runs went away underneath it, and starts it again', async () => {
    runner = await start(dataDir);
    // What `pg_ctl stop` sends: a fast shutdown.
    process.kill(postmasterOf(dataDir), 'SIGINT');
    await eventually(
      async () => (/runs again/.test(runner!.output()) ? true : undefined),
      'the server to run again',
      30_000,
    );
    const said = runner
      .output()
      .split('\n')
      .filter((line) => line.includes('stopped underneath it'));
    assert.equal(said.length, 1, runner.output());
    assert.match(said[0] ?? '', /"level":40.*which this instance runs, stopped underneath it .*starting it again/);
    await eventually(() => ready(runner!), 'readiness again', 30_000);
  });

  it('leaves the server running for another instance on its data folder when it stops first, and the other stops it last', async () => {
    assert.ok(runner !== undefined, 'the previous test left its instance running');
    const other = await start(dataDir);
    assert.match(other.output(), /is run by another process using this data folder: this instance uses it too/);
    const server = postmasterOf(dataDir);
    assert.equal(await stopped(runner), 0, runner.output());
    assert.match(runner.output(), /is left running for 1 other process\(es\) using it/);
    assert.ok(runs(server), 'the other instance still uses it');
    await eventually(
      async () => (/this instance runs the embedded PostgreSQL server .* now/.test(other.output()) ? true : undefined),
      'the other instance to take the server over',
    );
    assert.equal(await ready(other), true, 'the other instance never lost its database');
    assert.equal(await stopped(other), 0, other.output());
    assert.ok(!runs(server), `the last instance stops the server:\n${other.output()}`);
  });
});
