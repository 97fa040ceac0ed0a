import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from '../../config/app-config';
import { createRootLogger, PinoNestLogger, resolveLogFormat } from './logger';

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
