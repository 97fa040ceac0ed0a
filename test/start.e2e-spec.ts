import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const MAIN = join(__dirname, '..', 'src', 'main.js');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

interface Started {
  child: ChildProcess;
  output: () => string;
  ready: Promise<void>;
  exited: Promise<number | null>;
}

function start(env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready in')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, ready, exited };
}

describe('npm start on the embedded default', () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'events-api-start-')), 'data');
  let running: Started | undefined;
  after(() => running?.child.kill('SIGKILL'));

  it('starts an embedded PostgreSQL, serves both listeners, creates demo data once and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const adminPort = await freePort();
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      LOG_LEVEL: 'info',
    };
    delete process.env['DATABASE_URL'];

    running = start(env);
    await running.ready;
    const firstOutput = running.output();
    const organiserKey = /organiser org_\w+\s+key (svc_live_[0-9a-f]{48})/.exec(firstOutput)?.[1];
    const venueKey = /venue\s+ven_\w+\s+key (svc_live_[0-9a-f]{48})/.exec(firstOutput)?.[1];
    assert.ok(organiserKey, firstOutput);
    assert.ok(venueKey);
    assert.match(firstOutput, new RegExp(`Internal API  http://127.0.0.1:${adminPort}/internal`));

    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, {
      headers: { authorization: `Bearer ${organiserKey}`, 'x-request-id': 'trace-me-1' },
    });
    assert.equal(me.status, 200);
    const body = (await me.json()) as { data: { scopes: string[] } };
    assert.deepEqual(body.data.scopes, [
      'events:read',
      'orders:read',
      'events:write',
      'webhooks:read',
      'webhooks:write',
    ]);
    const venue = await fetch(`http://127.0.0.1:${port}/v1/venues`, {
      headers: { authorization: `Bearer ${venueKey}` },
    });
    assert.equal(((await venue.json()) as { data: Array<{ locations: unknown[] }> }).data[0]?.locations.length, 1);
    const unauthorised = await fetch(`http://127.0.0.1:${port}/v1`);
    assert.equal(unauthorised.status, 401);

    running.child.kill('SIGTERM');
    assert.equal(await running.exited, 0);
    const logLines = running
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const requestLine = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line['reqId'] === 'trace-me-1');
    assert.ok(requestLine, 'the request is logged as JSON with its request id');
    assert.ok(!logLines.some((line) => line.includes(organiserKey.slice(9))), 'no key in the JSON log');
    assert.ok(!existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'PostgreSQL stopped cleanly');

    running = start(env);
    await running.ready;
    assert.doesNotMatch(running.output(), /svc_live_/, 'demo keys are printed once, on the first start only');
    const again = await fetch(`http://127.0.0.1:${port}/v1/me`, {
      headers: { authorization: `Bearer ${organiserKey}` },
    });
    assert.equal(again.status, 200, 'data persists across restarts');
    running.child.kill('SIGINT');
    assert.equal(await running.exited, 0);
  });
});
