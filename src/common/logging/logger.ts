import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import { currentRequestId } from '../request-id/request-context';

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

/**
 * Lets Nest's Logger (bootstrap messages, and services' own `Logger`s) write
 * to the same JSON log; a line written while serving a request carries that
 * request's `reqId`, like Fastify's request lines.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info(this.fields({ context }), String(message));
  }

  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error(this.fields({ context, trace }), String(message));
  }

  warn(message: unknown, context?: string): void {
    // An object with `msg` is a structured line: its other members become fields (alertable).
    if (typeof message === 'object' && message !== null && 'msg' in message) {
      const { msg, ...fields } = message as Record<string, unknown>;
      this.logger.warn({ ...this.fields({ context }), ...fields }, String(msg));
      return;
    }
    this.logger.warn(this.fields({ context }), String(message));
  }

  debug(message: unknown, context?: string): void {
    this.logger.debug(this.fields({ context }), String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.logger.trace(this.fields({ context }), String(message));
  }

  private fields(fields: Record<string, unknown>): Record<string, unknown> {
    const reqId = currentRequestId();
    return reqId === undefined ? fields : { ...fields, reqId };
  }
}
