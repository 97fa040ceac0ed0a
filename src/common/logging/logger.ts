import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

/**
 * JSON logs through pino, the logger Fastify is built on: request lines carry
 * `reqId` (the X-Request-Id) because Fastify hands each request a child
 * logger. Authorization headers and secrets are never serialised: requests
 * are logged as method, url and remote address only, and the redact list
 * covers the places a key or secret could sit in a logged object.
 */
export function createRootLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'events-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
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
  });
}

/** Lets Nest's own messages (bootstrap, module errors) go to the same JSON log. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }

  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }

  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
