import type { FastifyBaseLogger } from 'fastify';
import pino, { type Logger } from 'pino';

/** The one line every answered request writes (at info). */
export interface AccessLine {
  reqId: string;
  method: string;
  /** The path only: a query string is never logged. */
  url: string;
  statusCode: number;
  responseTimeMs: number;
}

const INFO = 30;
const LINE_KEYS: ReadonlyArray<keyof AccessLine> = ['reqId', 'method', 'url', 'statusCode', 'responseTimeMs'];
/** pino writes a number that is not finite as null. */
const finite = (value: number): number | null => (Number.isFinite(value) ? value : null);

/** The parts of a pino logger's line that do not change from line to line, read from the logger itself. */
interface LinePieces {
  /** `{"level":30`, as pino begins an info line. */
  levelPrefix: string;
  /** `,"time":"…"` */
  time: () => string;
  /** The logger's base fields and bindings, `,"service":"events-api"`. */
  bindings: string;
  stream: { write(line: string): unknown };
}

/**
 * pino's own pieces of a line, when the logger writes plain JSON lines: no
 * formatters, mixin, hooks, nested key, message prefix, serializers or
 * redaction of these keys, any of which would change the line. Any of them
 * (or a logger that is not pino) gives null, and the line goes through pino.
 */
function plainLinePieces(logger: Logger): LinePieces | null {
  const symbols = pino.symbols;
  // pino's own fields, keyed by the symbols it exports for this.
  const internals = logger as unknown as Record<symbol, unknown>;
  const formatters = internals[symbols.formattersSym] as { bindings?: unknown; log?: unknown } | undefined;
  const hooks = internals[symbols.hooksSym] as { streamWrite?: unknown; logMethod?: unknown } | undefined;
  const levelPrefix = (internals[symbols.lsCacheSym] as Record<number, string> | undefined)?.[INFO];
  const time = internals[symbols.timeSym] as (() => string) | undefined;
  const bindings = internals[symbols.chindingsSym] as string | undefined;
  const stream = internals[symbols.streamSym] as LinePieces['stream'] | undefined;
  const serializers = (internals[symbols.serializersSym] ?? {}) as Record<string, unknown>;
  const stringifiers = (internals[symbols.stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
  const keys = [...LINE_KEYS, 'msg'];
  const plain =
    levelPrefix === `{"level":${INFO}` &&
    internals[symbols.messageKeySym] === 'msg' &&
    internals[symbols.mixinSym] === undefined &&
    internals[symbols.nestedKeySym] === null &&
    // Exported by pino, though not in its types.
    internals[(symbols as unknown as Record<string, symbol>)['msgPrefixSym'] ?? Symbol()] === undefined &&
    hooks?.streamWrite === undefined &&
    hooks?.logMethod === undefined &&
    formatters?.log === undefined &&
    internals[symbols.endSym] === '}\n' &&
    stringifiers[symbols.wildcardFirstSym] === undefined &&
    keys.every((key) => serializers[key] === undefined && stringifiers[key] === undefined);
  if (!plain || typeof time !== 'function' || typeof bindings !== 'string' || stream === undefined) return null;
  return { levelPrefix, time, bindings, stream };
}

/**
 * Writes access lines byte for byte as the request's own child logger would
 * (the request id first, then the fields), built from the root logger's own
 * pieces (its level prefix, clock, base fields and stream) in one template:
 * pino's general path (serialising an object key by key, then redacting) was
 * a visible part of every request's cost, and these fields are fixed and
 * never hold a secret. Anything else a request logs still goes through
 * `request.log`, redacted. The request's logger still decides whether the
 * line is written (a route's `logLevel`, such as the probes' `silent`), and
 * the root logger's level too. The spec holds the lines to pino's.
 */
export function accessLogOf(logger: FastifyBaseLogger): (line: AccessLine, requestLog: FastifyBaseLogger) => void {
  const access = logger.child({}, { redact: [] }) as Logger;
  const pieces = plainLinePieces(access);
  if (pieces === null) {
    return (line, requestLog) => {
      if ((requestLog as Logger).isLevelEnabled('info')) access.info(line, 'request completed');
    };
  }
  const { levelPrefix, time, bindings, stream } = pieces;
  return (line, requestLog) => {
    if (!(requestLog as Logger).isLevelEnabled('info') || !access.isLevelEnabled('info')) return;
    // JSON.stringify escapes a string as pino does (quotes, backslashes, control characters).
    stream.write(
      `${levelPrefix}${time()}${bindings},"reqId":${JSON.stringify(line.reqId)},"method":${JSON.stringify(line.method)},"url":${JSON.stringify(line.url)},"statusCode":${finite(line.statusCode)},"responseTimeMs":${finite(line.responseTimeMs)},"msg":"request completed"}\n`,
    );
  };
}
