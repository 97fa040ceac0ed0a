import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/**
 * Fastify's child logger per request, without options when the route sets
 * none. Fastify always passes an options object (empty for most routes), and
 * pino then takes its slow path for a child: it rebuilds the formatters for
 * every request. `logger.child(bindings)` gives the same logger (the same
 * bindings, level and redaction) on pino's fast path; a route's `logLevel`
 * (the probes' `silent`) is still passed on.
 */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return Object.keys(options).length === 0 ? logger.child(bindings) : logger.child(bindings, options);
}
