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

  it('an access line is byte for byte pino’s for any request id and path: quotes, backslashes, control and Latin-1 characters, a time that is not a number', () => {
    // In the order the service gives them (pino writes an object's fields in their order).
    const odd = [
      {
        reqId: 'with "quotes" and \\ backslash',
        method: 'GET',
        url: '/v1/events/%22x%22',
        statusCode: 404,
        responseTimeMs: 0.1,
      },
      {
        reqId: 'ctl\u0001\u001f\u007f',
        method: 'GET',
        url: '/v1/\u00e9v\u00e8nements/\t',
        statusCode: 400,
        responseTimeMs: 12,
      },
      { reqId: 'nan', method: 'PATCH', url: '/v1/events/x', statusCode: 500, responseTimeMs: Number.NaN },
    ];
    for (const fields of odd) {
      const [viaRequest, viaAccessLog] = linesOf((destination) => {
        const root = pino(
          { level: 'info', base: { service: 'events-api' }, timestamp: () => ',"time":"fixed"', redact: ['key'] },
          destination,
        );
        const { reqId, ...rest } = fields;
        root.child({ reqId }).info(rest, 'request completed');
        accessLogOf(root)(fields, root.child({ reqId }));
      });
      assert.equal(viaAccessLog, viaRequest);
    }
  });

  it('a logger whose options change its lines (a log formatter, a serializer) writes access lines through pino', () => {
    const fields = { reqId: 'req-4', method: 'GET', url: '/v1/me', statusCode: 200, responseTimeMs: 2 };
    const [withFormatter] = linesOf((destination) => {
      const root = pino({ formatters: { log: (object) => ({ ...object, formatted: true }) } }, destination);
      accessLogOf(root)(fields, root);
    });
    assert.match(withFormatter ?? '', /"formatted":true/);
    const [withSerializer] = linesOf((destination) => {
      const root = pino({ serializers: { url: () => '[path]' } }, destination);
      accessLogOf(root)(fields, root);
    });
    assert.match(withSerializer ?? '', /"url":"\[path\]"/);
  });

  it('a root logger above info writes no access line, whatever a route’s level', () => {
    const lines = linesOf((destination) => {
      const root = pino({ level: 'warn' }, destination);
      accessLogOf(root)(
        { reqId: 'r', method: 'GET', url: '/v1/me', statusCode: 200, responseTimeMs: 1 },
        root.child({ reqId: 'r' }, { level: 'debug' }),
      );
    });
    assert.deepEqual(lines, []);
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

  it('a request that logs nothing of its own makes no child logger; its first line makes one, with the request id', () => {
    const lines: string[] = [];
    const root = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const makeChild = root.child.bind(root);
    let made = 0;
    root.child = ((...args: Parameters<typeof root.child>) => {
      made += 1;
      return makeChild(...args);
    }) as typeof root.child;
    const requestLog = requestLoggerFactory(root, { reqId: 'req-5' }, {});
    assert.equal((requestLog as unknown as pino.Logger).isLevelEnabled('info'), true);
    assert.equal(requestLog.level, 'info');
    assert.equal(made, 0, 'a child was made for a request that logged nothing');
    requestLog.warn('first');
    requestLog.error({ detail: 1 }, 'second');
    assert.equal(made, 1);
    assert.deepEqual(
      lines.map((line) => JSON.parse(line) as { reqId: string; msg: string }).map(({ reqId, msg }) => [reqId, msg]),
      [
        ['req-5', 'first'],
        ['req-5', 'second'],
      ],
    );
  });

  it('a route’s log level decides without a child whether its requests log (a silent probe logs nothing)', () => {
    const root = pino({ level: 'info' }, { write: () => undefined });
    const probe = requestLoggerFactory(root, { reqId: 'probe' }, { level: 'silent' }) as unknown as pino.Logger;
    assert.equal(probe.isLevelEnabled('info'), false);
    assert.equal(probe.isLevelEnabled('fatal'), false);
    const verbose = requestLoggerFactory(root, { reqId: 'r' }, { level: 'debug' }) as unknown as pino.Logger;
    assert.equal(verbose.isLevelEnabled('debug'), true);
    assert.equal(verbose.isLevelEnabled('trace'), false);
  });

  it('a route’s log level reaches its requests’ loggers (the probes are silent)', () => {
    const root = pino({ level: 'info' }, { write: () => undefined });
    const child = requestLoggerFactory(root, { reqId: 'probe' }, { level: 'silent' });
    assert.equal(child.level, 'silent');
  });
});
