import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { loggableError } from './loggable-error';

export type LogFormat = 'json' | 'pretty' | 'auto';

/** `auto` (no LOG_FORMAT): pretty for a person at a terminal, JSON lines for anything that collects logs. */
export function resolveLogFormat(format: LogFormat, output: { isTTY?: boolean } = process.stdout): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return output.isTTY === true ? 'pretty' : 'json';
}

/**
 * pino's `isoTime` (`,"time":"<ISO 8601>"`), formatted once per millisecond:
 * under load several lines share a millisecond, and formatting a date was a
 * visible part of every request's cost.
 */
export function isoTimeOncePerMillisecond(clock: () => number = Date.now): () => string {
  let formattedAt = Number.NaN;
  let formatted = '';
  return () => {
    const now = clock();
    if (now !== formattedAt) {
      formattedAt = now;
      formatted = `,"time":"${new Date(now).toISOString()}"`;
    }
    return formatted;
  };
}

/** Bytes of JSON lines gathered before they are written, and the longest a line waits in the buffer. */
export const LOG_BATCH_BYTES = 4096;
export const LOG_FLUSH_MS = 100;

/**
 * Where JSON lines go: sonic-boom (pino's stream) on `fd`, asynchronous,
 * and batched: lines are gathered to LOG_BATCH_BYTES (about fifteen access
 * lines) and written in one call, and none waits more than LOG_FLUSH_MS.
 * Written line by line, every request paid a write handed to libuv's thread
 * pool (the write, the wake-ups, the thread switches): about as much CPU as
 * building the line. pino flushes what is buffered when the process exits,
 * also after an uncaught exception; a SIGKILL loses at most the last
 * LOG_FLUSH_MS of lines.
 */
export function batchedStdout(fd = 1): ReturnType<typeof pino.destination> {
  return pino.destination({ dest: fd, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS });
}

/** How long a stopping process waits for its buffered log lines before it leaves without them. */
export const EXIT_FLUSH_WAIT_MS = 2_000;

/**
 * Resolves once the log's buffered lines are written, or after `waitMs` when
 * stdout takes none (a pipe nobody reads, a stalled collector): the lines
 * left are then dropped, so that neither this wait nor pino's synchronous
 * flush at exit (which retries a full pipe without end) holds the process.
 */
export async function flushedBeforeExit(logger: Logger, waitMs = EXIT_FLUSH_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const written = await Promise.race([
    new Promise<true>((done) => logger.flush(() => done(true))),
    new Promise<false>((late) => (timer = setTimeout(() => late(false), waitMs))),
  ]);
  clearTimeout(timer);
  if (written) return;
  const stream = (logger as unknown as Record<symbol, { destroy?: () => void } | undefined>)[pino.symbols.streamSym];
  stream?.destroy?.();
}

/**
 * pino-pretty, loaded only when a terminal (or LOG_FORMAT=pretty) asks for
 * it: a deployment's JSON logs never hold the formatter and its thirty
 * modules in memory.
 */
function prettyFormatter(): typeof PinoPretty {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('pino-pretty') as { default: typeof PinoPretty }).default;
}

/**
 * JSON logs through pino, the logger Fastify is built on: request lines carry
 * `reqId` (the X-Request-Id) because Fastify hands each request a child
 * logger. Authorization headers and secrets are never serialised: requests
 * are logged as method, url and remote address only, and the redact list
 * covers the places a key or secret could sit in a logged object.
 *
 * The pretty form is the same lines, redacted the same way (pino redacts
 * before the line reaches pino-pretty), formatted in this thread: no
 * transport worker, so a crash loses nothing.
 */
export function createRootLogger(
  level: string,
  format: LogFormat = 'json',
  destination: NodeJS.WritableStream = process.stdout,
): Logger {
  const isTTY = (destination as { isTTY?: boolean }).isTTY === true;
  const stream: DestinationStream =
    resolveLogFormat(format, { isTTY }) === 'pretty'
      ? prettyFormatter()({
          destination,
          sync: true,
          colorize: isTTY,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname,service',
          singleLine: true,
        })
      : destination === process.stdout
        ? batchedStdout()
        : destination;
  return pino(
    {
      level,
      base: { service: 'events-api' },
      timestamp: isoTimeOncePerMillisecond(),
      // A database error logged whole would carry its statement and parameters; under `err` it is cut to what names it.
      serializers: { err: loggableError },
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          '*.key',
          '*.secret',
          '*.token',
          'key',
          'secret',
          'token',
        ],
        censor: '[redacted]',
      },
    },
    stream,
  );
}

/**
 * Nest's own start-up chatter (one line per module, per controller and per
 * route) is for debugging; at info the start-up is the few lines the
 * service writes itself.
 */
const NEST_STARTUP_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/**
 * Lets Nest's Logger (bootstrap messages, and services' own `Logger`s) write
 * to the same JSON log. A service's line written for a request carries that
 * request's `reqId` when the service passes it (a structured line, see
 * `warn`), as Fastify's request lines do.
 */
export class PinoNestLogger implements LoggerService {
  /**
   * `errorsThrownToCaller`: a failed start's error, which Nest's
   * ExceptionHandler logs before it throws it, goes to debug: the caller
   * (the CLI) says it in its one plain line, and a JSON line of the same
   * error on the terminal would say it twice.
   */
  constructor(
    private readonly logger: Logger,
    private readonly options: { errorsThrownToCaller?: boolean } = {},
  ) {}

  log(message: unknown, context?: string): void {
    if (context !== undefined && NEST_STARTUP_CONTEXTS.has(context)) {
      this.logger.debug({ context }, String(message));
      return;
    }
    this.logger.info({ context }, String(message));
  }

  error(message: unknown, trace?: string, context?: string): void {
    if (this.options.errorsThrownToCaller === true && context === 'ExceptionHandler') {
      this.logger.debug({ context, trace }, String(message));
      return;
    }
    this.logger.error({ context, trace }, String(message));
  }

  warn(message: unknown, context?: string): void {
    // An object with `msg` is a structured line: its other members become fields (alertable).
    if (typeof message === 'object' && message !== null && 'msg' in message) {
      const { msg, ...fields } = message as Record<string, unknown>;
      this.logger.warn({ context, ...fields }, String(msg));
      return;
    }
    this.logger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
