import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { childServer, serverByPid, stopServerProcess } from './server-stop';

/** A stand-in server: a node process that does what `onSignals` says with SIGINT and SIGQUIT. */
function server(onSignals: string) {
  const child = spawn(process.execPath, ['-e', `${onSignals}; setInterval(() => {}, 1000); process.send?.('up')`], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const up = new Promise<void>((resolve) => child.once('message', () => resolve()));
  return { child, exited, up };
}

describe('stopServerProcess (a server that does not stop never keeps the service from exiting)', () => {
  it('stops with a fast shutdown when the server answers it, saying nothing', async () => {
    const { child, exited, up } = server(`process.on('SIGINT', () => process.exit(0))`);
    await up;
    const said: string[] = [];
    assert.equal(
      await stopServerProcess(childServer(child, exited), (m) => said.push(m), { fastMs: 5_000, immediateMs: 5_000 }),
      true,
    );
    assert.deepEqual(said, []);
  });

  it('asks for an immediate shutdown when the fast one takes too long, and says so', async () => {
    const { child, exited, up } = server(
      `process.on('SIGINT', () => {}); process.on('SIGQUIT', () => process.exit(0))`,
    );
    await up;
    const said: string[] = [];
    assert.equal(
      await stopServerProcess(childServer(child, exited), (m) => said.push(m), { fastMs: 300, immediateMs: 5_000 }),
      true,
    );
    assert.equal(said.length, 1);
    assert.match(said[0]!, /has not stopped within 300 ms of its fast shutdown: asking for an immediate one/);
  });

  it('gives up on a server that answers no shutdown (stopped, hung), saying it is left as it is', async () => {
    const { child, exited, up } = server(`process.on('SIGINT', () => {}); process.on('SIGQUIT', () => {})`);
    await up;
    const said: string[] = [];
    try {
      const started = Date.now();
      assert.equal(
        await stopServerProcess(childServer(child, exited), (m) => said.push(m), { fastMs: 200, immediateMs: 200 }),
        false,
      );
      assert.ok(Date.now() - started < 2_000);
      assert.match(said[1] ?? '', /answers no shutdown: left as it is/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('stops a server known by its pid alone (one taken over from a killed instance) by the same steps', async () => {
    const { child, up } = server(`process.on('SIGINT', () => {}); process.on('SIGQUIT', () => process.exit(0))`);
    await up;
    const runs = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const said: string[] = [];
    const stopped = await stopServerProcess(serverByPid(child.pid!, runs), (m) => said.push(m), {
      fastMs: 300,
      immediateMs: 5_000,
    });
    assert.equal(stopped, true);
    assert.match(said[0] ?? '', /asking for an immediate one/);
  });
});
