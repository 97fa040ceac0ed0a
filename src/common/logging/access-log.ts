import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

/** The one line every answered request writes (at info). */
export interface AccessLine {
  reqId: string;
  method: string;
  /** The path only: a query string is never logged. */
  url: string;
  statusCode: number;
  responseTimeMs: number;
}

/**
 * Writes access lines through the service's logger, byte for byte as the
 * request's own child logger would (the request id first, then the fields),
 * without that logger's redaction pass: the line's fields are fixed and
 * never hold a secret, and redacting them cost a few microseconds on every
 * request. Anything else a request logs still goes through `request.log`,
 * redacted. The request's logger still decides whether the line is written
 * (a route's `logLevel`, such as the probes' `silent`).
 */
export function accessLogOf(logger: FastifyBaseLogger): (line: AccessLine, requestLog: FastifyBaseLogger) => void {
  const access = logger.child({}, { redact: [] });
  return (line, requestLog) => {
    if ((requestLog as Logger).isLevelEnabled('info')) access.info(line, 'request completed');
  };
}
