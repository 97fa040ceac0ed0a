import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { accessLogOf } from './access-log';
import { requestLoggerFactory } from './request-logger';
import { createRootLogger, isoTimeOncePerMillisecond } from './logger';

function linesOf(write: (destination: { write(line: string): void }) => void): string[] {
  const lines: string[] = [];
  write({ write: (line) => void lines.push(line) });
  return lines;
}

describe('access log', () => {
  it('an access line is byte for byte the line the request’s own logger writes', () => {
    const fields = { method: 'GET', url: '/v1/events/evt_1', statusCode: 200, responseTimeMs: 1.5 };
    const [viaRequest, viaAccessLog] = linesOf((destination) => {
      // The service's root logger (redaction on), with a fixed clock so the two lines can be compared.
      const root = pino(
        { level: 'info', base: { service: 'events-api' }, timestamp: () => ',"time":"fixed"', redact: ['key'] },
        destination,
      );
      const requestLog = root.child({ reqId: 'req-1' });
      requestLog.info(fields, 'request completed');
      accessLogOf(root)({ reqId: 'req-1', ...fields }, requestLog);
    });
    assert.ok(viaRequest?.includes('"reqId":"req-1"'));
    assert.equal(viaAccessLog, viaRequest);
  });

  it('a route whose logger is silent writes no access line (the probes)', () => {
    const lines = linesOf((destination) => {
      const root = pino({ level: 'info' }, destination);
      accessLogOf(root)(
        { reqId: 'probe', method: 'GET', url: '/healthz', statusCode: 200, responseTimeMs: 0.1 },
        root.child({ reqId: 'probe' }, { level: 'silent' }),
      );
    });
    assert.deepEqual(lines, []);
  });

  it('lines other than the access line are still redacted', () => {
    const [line] = linesOf((destination) => {
      const root = createRootLogger('info', 'json', destination as unknown as NodeJS.WritableStream);
      accessLogOf(root);
      root.child({ reqId: 'req-2' }).info({ key: 'svc_live_secret' }, 'something');
    });
    assert.ok(line !== undefined && !line.includes('svc_live_secret'), line);
  });
});

describe('log time', () => {
  it('the time of a line is the ISO 8601 instant of its millisecond, formatted again when the clock moves', () => {
    let now = Date.parse('2026-11-26T10:00:00.123Z');
    const time = isoTimeOncePerMillisecond(() => now);
    assert.equal(time(), ',"time":"2026-11-26T10:00:00.123Z"');
    assert.equal(time(), ',"time":"2026-11-26T10:00:00.123Z"');
    now += 1;
    assert.equal(time(), ',"time":"2026-11-26T10:00:00.124Z"');
    assert.equal(time(), `,"time":"${new Date(now).toISOString()}"`);
  });
});

describe('request logger', () => {
  it('a request’s logger writes the same line whether Fastify passed empty options or none', () => {
    const [viaOptions, viaFactory] = linesOf((destination) => {
      const root = pino(
        { level: 'info', base: { service: 'events-api' }, timestamp: () => ',"time":"fixed"', redact: ['key'] },
        destination,
      );
      root.child({ reqId: 'req-3' }, {}).info({ key: 'secret' }, 'line');
      requestLoggerFactory(root, { reqId: 'req-3' }, {}).info({ key: 'secret' }, 'line');
    });
    assert.ok(viaOptions?.includes('"reqId":"req-3"') && viaOptions.includes('[Redacted]'), viaOptions);
    assert.equal(viaFactory, viaOptions);
  });

  it('a route’s log level reaches its requests’ loggers (the probes are silent)', () => {
    const root = pino({ level: 'info' }, { write: () => undefined });
    const child = requestLoggerFactory(root, { reqId: 'probe' }, { level: 'silent' });
    assert.equal(child.level, 'silent');
  });
});
