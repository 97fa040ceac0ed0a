import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { QueryFailedError } from 'typeorm';
import { ConfigError, loadAppConfig } from '../../config/app-config';
import { eventually } from '../../../test/support/eventually';
import {
  batchedStdout,
  createRootLogger,
  LOG_BATCH_BYTES,
  LOG_FLUSH_MS,
  PinoNestLogger,
  resolveLogFormat,
} from './logger';

function capture(isTTY: boolean): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  (stream as PassThrough & { isTTY?: boolean }).isTTY = isTTY;
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { stream, text: () => text };
}

describe('log format', () => {
  it('JSON lines are the default when stdout is not a terminal', () => {
    assert.equal(resolveLogFormat('auto', { isTTY: false }), 'json');
    assert.equal(resolveLogFormat('auto', {}), 'json');
  });

  it('loads the pretty formatter only for pretty lines: JSON logs never hold pino-pretty', async () => {
    // A fresh process: this one's module cache already holds whatever the other tests loaded.
    const script = `
      const { createRootLogger } = require(${JSON.stringify(require.resolve('./logger'))});
      const { PassThrough } = require('node:stream');
      const held = () => Object.keys(require.cache).some((path) => path.includes('/node_modules/pino-pretty/'));
      createRootLogger('info', 'json', new PassThrough());
      const afterJson = held();
      createRootLogger('info', 'pretty', new PassThrough());
      console.log(JSON.stringify({ afterJson, afterPretty: held() }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script]);
    assert.deepEqual(JSON.parse(stdout), { afterJson: false, afterPretty: true });
  });

  it('a terminal gets pretty lines', () => {
    assert.equal(resolveLogFormat('auto', { isTTY: true }), 'pretty');
  });

  it('LOG_FORMAT overrides the terminal check either way', () => {
    assert.equal(resolveLogFormat('json', { isTTY: true }), 'json');
    assert.equal(resolveLogFormat('pretty', { isTTY: false }), 'pretty');
    assert.equal(loadAppConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
    assert.equal(loadAppConfig({ LOG_FORMAT: 'JSON' }).logFormat, 'json');
    assert.equal(loadAppConfig({}).logFormat, 'auto');
  });

  it('an unknown LOG_FORMAT stops the start with a message naming the variable', () => {
    assert.throws(
      () => loadAppConfig({ LOG_FORMAT: 'xml' }),
      (error: unknown) => {
        return error instanceof ConfigError && error.message.includes('LOG_FORMAT');
      },
    );
  });

  it('pretty lines are redacted like JSON lines: no key, secret or token in either form', () => {
    for (const format of ['json', 'pretty'] as const) {
      const out = capture(false);
      const logger = createRootLogger('info', format, out.stream);
      logger.info(
        { authorization: 'Bearer svc_live_abc', webhook: { secret: 'whsec_123' }, admin: { token: 'tok_456' } },
        'hello',
      );
      const text = out.text();
      assert.ok(text.includes('hello'), format);
      assert.ok(!/svc_live_abc|whsec_123|tok_456/.test(text), `${format}: ${text}`);
      assert.equal(text.trimStart().startsWith('{'), format === 'json', `${format} form: ${text}`);
    }
  });
});

describe('start-up lines', () => {
  it("Nest's per-module and per-route start-up lines are debug, not info", () => {
    const out = capture(false);
    const nest = new PinoNestLogger(createRootLogger('info', 'json', out.stream));
    nest.log('EventsModule dependencies initialized', 'InstanceLoader');
    nest.log('Mapped {/v1/events, GET} route', 'RouterExplorer');
    nest.log('Nest application successfully started', 'NestApplication');
    nest.log('webhook delivery: 12 attempts', 'WebhookDeliveryWorker');
    const lines = out
      .text()
      .split('\n')
      .filter((line) => line !== '');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /webhook delivery/);
  });
});

describe('errors in log lines', () => {
  it('writes a database error logged whole under err without its statement, parameters or quoted values', () => {
    const out = capture(false);
    const driverError = Object.assign(new Error('invalid input syntax for type uuid: "whsec_secret"'), {
      code: '22P02',
      severity: 'ERROR',
      detail: 'Key (billing_email)=(a@b.example) already exists.',
    });
    const failure = new QueryFailedError('INSERT INTO x VALUES ($1, $2)', ['a@b.example', 'whsec_secret'], driverError);
    createRootLogger('info', 'json', out.stream).child({ reqId: 'r1' }).error({ err: failure }, 'page failed');
    const line = JSON.parse(out.text()) as { err: { type: string; code: string; message: string } };
    assert.equal(line.err.type, 'QueryFailedError');
    assert.equal(line.err.code, '22P02');
    for (const leak of ['whsec_secret', 'a@b.example', 'INSERT INTO']) assert.ok(!out.text().includes(leak), leak);
  });
});

describe('log writes', () => {
  /** A batched stream on a file of its own, and the file's lines so far. */
  function onFile(): { stream: ReturnType<typeof batchedStdout>; lines: () => string[]; close: () => Promise<void> } {
    const folder = mkdtempSync(join(tmpdir(), 'log-writes-'));
    const file = join(folder, 'out.log');
    const fd = openSync(file, 'a');
    const stream = batchedStdout(fd);
    return {
      stream,
      lines: () =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line !== ''),
      // Ending the stream writes what is left and closes the file.
      close: async () => {
        await new Promise((closed) => {
          stream.once('close', closed);
          stream.end();
        });
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }

  it('JSON lines are written in batches: ten lines logged together go out in one write', async () => {
    const { stream, lines, close } = onFile();
    try {
      let writes = 0;
      stream.on('write', () => (writes += 1));
      const line = `${JSON.stringify({ level: 30, msg: 'request completed' })}\n`;
      assert.ok(line.length * 10 < LOG_BATCH_BYTES);
      for (let i = 0; i < 10; i += 1) stream.write(line);
      await new Promise<void>((flushed) => stream.flush(() => flushed()));
      assert.equal(lines().length, 10);
      assert.equal(writes, 1, `${writes} writes for ten lines`);
    } finally {
      await close();
    }
  });

  it('a flush resolves only once every buffered line is written, also when it comes during a write', async () => {
    // What the start does before its banner: lines that fill a batch begin a write, a few more wait
    // behind it, and the flush comes while the write is under way. A flush that resolved when that
    // write ended left the waiting lines for the periodic flush, after the banner.
    const { stream, lines, close } = onFile();
    try {
      const line = `${JSON.stringify({ level: 30, msg: 'fills the batch' })}\n`;
      const filling = Math.ceil(LOG_BATCH_BYTES / line.length) + 1;
      for (let i = 0; i < filling; i += 1) stream.write(line);
      for (let i = 0; i < 3; i += 1) stream.write(`${JSON.stringify({ level: 30, msg: 'waits behind it', i })}\n`);
      await new Promise<void>((flushed) => stream.flush(() => flushed()));
      assert.equal(lines().length, filling + 3, 'every line written when the flush resolves');
    } finally {
      await close();
    }
  });

  it('a lone log line is written by the periodic flush, with no line or flush after it', async () => {
    const { stream, lines, close } = onFile();
    try {
      const loggedAt = performance.now();
      stream.write('{"msg":"alone"}\n');
      await eventually(async () => (lines().length === 1 ? true : undefined), 'the line written', 10 * LOG_FLUSH_MS);
      assert.ok(performance.now() - loggedAt < 10 * LOG_FLUSH_MS);
    } finally {
      await close();
    }
  });

  it('a stopping process leaves, its last lines dropped, when stdout takes nothing (a pipe nobody reads)', async () => {
    // A fresh process whose stdout is a pipe this test never reads: 300 KiB of lines fill it, then the process stops.
    const script = `
      const { createRootLogger, flushedBeforeExit } = require(${JSON.stringify(require.resolve('./logger'))});
      const logger = createRootLogger('info', 'json');
      for (let i = 0; i < 300; i += 1) logger.info({ i, filler: 'x'.repeat(1000) }, 'fills the pipe');
      flushedBeforeExit(logger, 300).then(() => process.exit(0));`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const exited = await new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the process is still running 20 s later')), 20_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      assert.equal(exited, 0);
    } finally {
      child.kill('SIGKILL');
      child.stdout?.destroy();
    }
  });

  it('lines still in the buffer are written when the process exits', async () => {
    // A fresh process whose stdout is a pipe, as under a container runtime; it exits right after logging.
    const script = `
      const { createRootLogger } = require(${JSON.stringify(require.resolve('./logger'))});
      const logger = createRootLogger('info', 'json');
      for (let i = 0; i < 3; i += 1) logger.info({ i }, 'buffered');
      process.exit(0);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script]);
    const logged = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { i: number; msg: string });
    assert.deepEqual(
      logged.map((line) => [line.i, line.msg]),
      [
        [0, 'buffered'],
        [1, 'buffered'],
        [2, 'buffered'],
      ],
    );
  });
});
