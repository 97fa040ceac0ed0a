import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { freeLoopbackPort } from '../libs/net/free-port';
import { startServiceProcess, type ServiceProcess } from './support/service-process';
import { freshDatabase } from './support/test-database';

/**
 * Runs a compiled entry point under src/ (`entry`: its path parts, then its
 * arguments) until the embedded server it starts in `env.DATA_DIR` is up
 * (its postmaster.pid is there), or until the file `until` of DATA_DIR is.
 */
async function startedUntilServerUp(
  entry: string[],
  env: NodeJS.ProcessEnv,
  options: { processGroup?: boolean; until?: string } = {},
): Promise<{
  child: ChildProcess;
  output: () => string;
  errors: () => string;
  exited: Promise<number | null>;
  pidFile: string;
}> {
  const script = entry.findIndex((part) => part.endsWith('.js'));
  const child = spawn(
    process.execPath,
    [join(__dirname, '..', 'src', ...entry.slice(0, script + 1)), ...entry.slice(script + 1)],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.processGroup === true },
  );
  let output = '';
  let errors = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    errors += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const pidFile = join(String(env['DATA_DIR']), 'pg', 'postmaster.pid');
  const awaited = options.until === undefined ? pidFile : join(String(env['DATA_DIR']), options.until);
  for (let waited = 0; !existsSync(awaited) && waited < 30_000; waited += 20) await sleep(20);
  assert.ok(existsSync(awaited), output);
  return { child, output: () => output, errors: () => errors, exited, pidFile };
}

describe('npm start on the embedded default', () => {
  const workFolder = mkdtempSync(join(tmpdir(), 'events-api-start-'));
  // mkdtemp makes it 0700; this test's folder is ours to open, so the cluster stays in DATA_DIR and nothing is
  // placed in the machine's EMBEDDED_PG_HOME (a blocked data folder is the start-anywhere tests' case).
  chmodSync(workFolder, 0o755);
  const dataDir = join(workFolder, 'data');
  let running: ServiceProcess | undefined;
  const outputs: string[] = [];
  // The folder holds a whole embedded cluster (about 75 MB): removed once the service has stopped.
  after(async () => {
    if (running !== undefined && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
    rmSync(workFolder, { recursive: true, force: true });
  });

  it('starts an embedded PostgreSQL, reaches it through its Unix socket, serves both listeners, creates demo data once and stops cleanly on SIGTERM, and on a terminal’s Ctrl-C to its whole process group', async () => {
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(await freeLoopbackPort()),
      ADMIN_PORT: String(await freeLoopbackPort()),
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
    };

    running = await startServiceProcess(env);
    const firstOutput = running.output();
    outputs.push(firstOutput);
    const organiserKey = /organiser org_\w+\s+key (svc_live_[0-9a-f]{48})/.exec(firstOutput)?.[1];
    const venueKey = /venue\s+ven_\w+\s+key (svc_live_[0-9a-f]{48})/.exec(firstOutput)?.[1];
    assert.ok(organiserKey, firstOutput);
    assert.ok(venueKey);
    assert.ok(firstOutput.includes(`Internal API  ${running.adminUrl}/internal`));
    // The log's lines of the start (buffered in batches) come out before the summary block, in their order.
    const bannerAt = firstOutput.indexOf('Ready in');
    const embeddedLine = firstOutput.split('\n').find((line) => line.includes('"context":"embedded-postgres"'));
    assert.ok(embeddedLine !== undefined, firstOutput);
    assert.ok(firstOutput.indexOf(embeddedLine) < bannerAt, 'the start’s log lines precede the summary block');

    const me = await fetch(`${running.publicUrl}/v1/me`, {
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
    const venue = await fetch(`${running.publicUrl}/v1/venues`, { headers: { authorization: `Bearer ${venueKey}` } });
    assert.equal(((await venue.json()) as { data: Array<{ locations: unknown[] }> }).data[0]?.locations.length, 1);
    assert.equal((await fetch(`${running.publicUrl}/v1`)).status, 401);

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

    running = await startServiceProcess(env, { processGroup: true });
    outputs.push(running.output());
    assert.doesNotMatch(running.output(), /svc_live_/, 'demo keys are printed once, on the first start only');
    const again = await fetch(`${running.publicUrl}/v1/me`, { headers: { authorization: `Bearer ${organiserKey}` } });
    assert.equal(again.status, 200, 'data persists across restarts');
    // Every connection of the service to its embedded server is through the Unix socket (no client address).
    const database = new Client({ connectionString: readFileSync(join(dataDir, 'pg-url'), 'utf8').trim() });
    await database.connect();
    try {
      const { rows } = await database.query<{ socket: number; tcp: number }>(
        `SELECT count(*) FILTER (WHERE client_addr IS NULL)::int AS socket,
                count(*) FILTER (WHERE client_addr IS NOT NULL)::int AS tcp
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      assert.ok((rows[0]?.socket ?? 0) > 0, 'the service holds connections to its database');
      assert.equal(rows[0]?.tcp, 0, 'no connection of the service goes over loopback TCP');
    } finally {
      await database.end();
    }
    // Ctrl-C in a terminal signals the whole foreground process group: the server, too, must stop only last.
    process.kill(-(running.child.pid ?? 0), 'SIGINT');
    assert.equal(await running.exited, 0);
    const stopped = running.output().slice(running.output().indexOf('"signal":"SIGINT"'));
    assert.doesNotMatch(stopped, /"level":(40|50)/, `the drain met its database up:\n${stopped}`);
    assert.ok(!existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'PostgreSQL stopped cleanly');
  });

  it('prints the admin token only when it is first generated', () => {
    assert.equal(outputs.length, 2, 'the start test ran first');
    const token = /Admin token\s+([0-9a-f]{48})\s/.exec(outputs[0] ?? '')?.[1];
    assert.ok(token, outputs[0]);
    assert.ok(!(outputs[1] ?? '').includes(token), 'the second start does not print the token');
    assert.match(outputs[1] ?? '', /Admin token\s+kept in /);
  });

  it('stops the embedded PostgreSQL when stopped during the start, leaving no server behind', async () => {
    const env = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(await freeLoopbackPort()),
      ADMIN_PORT: String(await freeLoopbackPort()),
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
    };
    // The signal comes once the server is up and the service is still starting (migrations, Nest).
    const { child, output, exited, pidFile } = await startedUntilServerUp(['main.js'], env);
    child.kill('SIGTERM');
    await exited;
    assert.match(output(), /"msg":"stopped"/, output());
    assert.ok(!existsSync(pidFile), `PostgreSQL was stopped too:\n${output()}`);
  });

  it('a stop signal during the start ends it quietly: one info line, exit code 0, the embedded database stopped', async () => {
    // A data folder of its own: its first start applies every migration, which the signal interrupts.
    const port = await freeLoopbackPort();
    const env = {
      ...process.env,
      DATA_DIR: join(workFolder, 'stopped-while-starting'),
      PORT: String(port),
      // Where clients reach it, as a start that warns of nothing is set up.
      PUBLIC_WEB_URL: `http://localhost:${port}`,
      ADMIN_PORT: String(await freeLoopbackPort()),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      DATABASE_URL: '',
    };
    // pg-url is written once the server is up and its database made: the service's own start begins then.
    const { child, output, errors, exited, pidFile } = await startedUntilServerUp(['main.js'], env, {
      until: 'pg-url',
    });
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output());
    const lines = output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    assert.deepEqual(
      lines.filter((line) => line.level >= 40),
      [],
      'no warning, error or stack: a stop is no failure',
    );
    assert.equal(lines.filter((line) => /start-up stopped/.test(line.msg)).length, 1, output());
    assert.equal(errors(), '', 'nothing on stderr, where a failed start says why');
    assert.doesNotMatch(output(), /Retrying|EPIPE|failed to start|Ready in/, output());
    assert.ok(!existsSync(pidFile), `PostgreSQL was stopped too:\n${output()}`);
  });

  it('npm run ops stopped by a terminal’s Ctrl-C stops the embedded server it started, leaving none behind', async () => {
    // A shell's job: the terminal's Ctrl-C signals its whole process group.
    const { child, output, exited, pidFile } = await startedUntilServerUp(
      ['ops', 'ops.main.js', 'organisers:list'],
      { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' },
      { processGroup: true },
    );
    process.kill(-(child.pid ?? 0), 'SIGINT');
    assert.equal(await exited, 130, output());
    for (let waited = 0; existsSync(pidFile) && waited < 10_000; waited += 20) await sleep(20);
    assert.ok(!existsSync(pidFile), `no server is left running:\n${output()}`);
  });
});

describe('a start that fails', () => {
  it('says why on stderr at the default log level too, in one line: a pool the database cannot hold is named with both figures, and no listener’s setting is blamed; it exits 2, as a refused setting does', async () => {
    await assert.rejects(
      startServiceProcess({
        DATABASE_URL: await freshDatabase(),
        ADMIN_TOKEN: randomBytes(16).toString('hex'),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
        DB_POOL_MAX: '5000',
        LOG_LEVEL: 'info',
      }),
      (error: Error) => {
        const stderr = error.message.split('\nstderr alone:\n')[1] ?? '';
        return (
          error.message.startsWith('service exited with 2:') &&
          /^the service failed to start: .*DB_POOL_MAX=5000.*would need \d+ connections[^\n]*\n$/.test(stderr)
        );
      },
    );
  });

  it('says why on stderr and exits 1 even with LOG_LEVEL=silent: a public port already taken is named, with the setting that moves it', async () => {
    const taken = createServer();
    await new Promise<void>((listening) => taken.listen(0, '127.0.0.1', listening));
    const port = (taken.address() as AddressInfo).port;
    try {
      await assert.rejects(
        startServiceProcess({
          DATABASE_URL: await freshDatabase(),
          PORT: String(port),
          ADMIN_PORT: String(await freeLoopbackPort()),
          ADMIN_TOKEN: randomBytes(16).toString('hex'),
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
          PUBLIC_WEB_URL: 'https://events.example.test',
          LOG_LEVEL: 'silent',
        }),
        (error: Error) =>
          error.message.startsWith('service exited with 1:') &&
          error.message.includes(
            `the service failed to start: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
          ) &&
          error.message.includes(
            `Port ${port} is in use by another process: stop it, or set PORT (the public API) to a free port.`,
          ),
      );
    } finally {
      await new Promise((closed) => taken.close(closed));
    }
  });

  it('names both settings when PORT and ADMIN_PORT are one port, instead of blaming another process', async () => {
    const port = await freeLoopbackPort();
    await assert.rejects(
      startServiceProcess({
        DATABASE_URL: await freshDatabase(),
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_PORT: String(port),
        ADMIN_TOKEN: randomBytes(16).toString('hex'),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'silent',
      }),
      (error: Error) => {
        const stderr = error.message.split('\nstderr alone:\n')[1] ?? '';
        return (
          error.message.startsWith('service exited with 1:') &&
          stderr.includes(
            `ADMIN_PORT and PORT are both ${port}, and the public API's listener took it first: give ADMIN_PORT (the internal API) a port of its own.`,
          ) &&
          !stderr.includes('another process')
        );
      },
    );
  });

  it('refuses a LOG_LEVEL pino does not have as a configuration error naming it, exiting 2 before anything starts', async () => {
    await assert.rejects(startServiceProcess({ LOG_LEVEL: 'verbose', DATABASE_URL: '' }), (error: Error) => {
      const stderr = error.message.split('\nstderr alone:\n')[1] ?? '';
      return (
        error.message.startsWith('service exited with 2:') &&
        stderr ===
          'configuration error: LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, got "verbose"\n'
      );
    });
  });

  it('says a configuration error before it loads the application: a refusal loads none of the service’s modules beyond its settings', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'events-api-refusal-load-'));
    after(() => rmSync(folder, { recursive: true, force: true }));
    // Preloaded into the service's process: on exit, the compiled modules of the service it loaded.
    const preload = join(folder, 'report-loaded.js');
    const report = join(folder, 'loaded.json');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, ` +
        `JSON.stringify(Object.keys(require.cache).filter((file) => file.includes('/dist/src/')))));\n`,
    );
    await assert.rejects(
      startServiceProcess({ LOG_LEVEL: 'verbose', DATABASE_URL: '' }, { nodeFlags: ['--require', preload] }),
      /service exited with 2:/,
    );
    const loaded = (JSON.parse(readFileSync(report, 'utf8')) as string[]).map((file) => file.split('/dist/src/')[1]);
    assert.ok(loaded.includes('main.js') && loaded.includes('config/app-config.js'), loaded.join(', '));
    for (const application of ['bootstrap.js', 'app.module.js', 'database/instances/instance-registry.js']) {
      assert.ok(!loaded.includes(application), `${application} was loaded for a refusal: ${loaded.join(', ')}`);
    }
  });

  it('refuses a data folder’s admin-token or webhook-secret-key file that breaks its setting’s rule: exit 2, one line naming the file, before the embedded database starts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'events-api-bad-secret-'));
    after(() => rmSync(dataDir, { recursive: true, force: true }));
    const refusal = async (file: string, content: string): Promise<string> => {
      rmSync(join(dataDir, 'admin-token'), { force: true });
      rmSync(join(dataDir, 'webhook-secret-key'), { force: true });
      writeFileSync(join(dataDir, file), content);
      const error = await startServiceProcess({
        DATABASE_URL: '',
        ADMIN_TOKEN: '',
        WEBHOOK_SECRET_KEY: '',
        DATA_DIR: dataDir,
      }).then(
        () => assert.fail(`the service started with ${file} = ${JSON.stringify(content)}`),
        (failed: unknown) => failed as Error,
      );
      assert.ok(error.message.startsWith('service exited with 2:'), error.message);
      return error.message.split('\nstderr alone:\n')[1] ?? '';
    };
    for (const content of ['short\n', '', `${'a'.repeat(20)} ${'b'.repeat(20)}\n`]) {
      assert.match(
        await refusal('admin-token', content),
        new RegExp(`^configuration error: the admin token in ${join(dataDir, 'admin-token')} must be [^\n]*\n$`),
      );
    }
    assert.match(
      await refusal('webhook-secret-key', 'zzz\n'),
      new RegExp(
        `^configuration error: the webhook secret key in ${join(dataDir, 'webhook-secret-key')} must be 64 hex characters[^\n]*\n$`,
      ),
    );
    assert.ok(!existsSync(join(dataDir, 'pg')), 'no embedded database was made');
  });

  it('names the listener’s setting, and not DATABASE_URL, when HOST or ADMIN_HOST is a name that does not resolve', async () => {
    const failedStart = async (hosts: Record<string, string>): Promise<string> => {
      const started = startServiceProcess({
        DATABASE_URL: await freshDatabase(),
        ADMIN_TOKEN: randomBytes(16).toString('hex'),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'silent',
        ...hosts,
      });
      const error = await started.then(
        () => assert.fail('the service started'),
        (failed: unknown) => failed as Error,
      );
      assert.ok(error.message.startsWith('service exited with 1:'), error.message);
      return error.message.split('\nstderr alone:\n')[1] ?? '';
    };
    // .invalid is reserved never to resolve (RFC 2606).
    const [publicHost, adminHost] = await Promise.all([
      failedStart({ HOST: 'no-such-host.invalid' }),
      failedStart({ ADMIN_HOST: 'no-such-admin-host.invalid' }),
    ]);
    assert.match(
      publicHost,
      /^HOST \(the public API\) is "no-such-host\.invalid", a host name that does not resolve here: set HOST to /m,
    );
    assert.match(
      adminHost,
      /^ADMIN_HOST \(the internal API\) is "no-such-admin-host\.invalid", a host name that does not resolve here: set ADMIN_HOST to /m,
    );
    for (const stderr of [publicHost, adminHost]) assert.doesNotMatch(stderr, /PostgreSQL|DATABASE_URL/, stderr);
  });
});
