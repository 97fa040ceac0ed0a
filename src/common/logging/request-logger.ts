import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn, Logger } from 'pino';

/** What a log method takes: an object or a message first, then what the message formats. */
type LogLine = Parameters<LogFn>;

/**
 * Fastify's logger for one request, made only when the request logs a line
 * of its own. Fastify builds a child logger for every request before any
 * route runs, and nearly every request logs nothing but its access line
 * (which `accessLogOf` writes without it): a pino child costs a few
 * microseconds and several objects, paid for nothing. This stands in for it
 * and builds the very same child (same bindings, level and redaction) the
 * first time a line is logged; until then it answers a level question from
 * the route's level or its parent's.
 */
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /**
   * The child itself. Without options when the route sets none: Fastify always passes an options object
   * (empty for most routes), and pino then takes its slow path for a child, rebuilding the formatters.
   */
  private get logger(): FastifyBaseLogger {
    this.made ??=
      Object.keys(this.options).length === 0
        ? this.parent.child(this.bindings)
        : this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  /** pino's own test, on the level this request's child would have, without making it. */
  isLevelEnabled(level: string): boolean {
    const { values } = (this.parent as Logger).levels;
    const threshold = values[this.level];
    const asked = values[level];
    return threshold !== undefined && asked !== undefined && asked >= threshold;
  }

  // Methods on the prototype, not arrow fields: nothing more is made per request than this object.
  fatal(...line: LogLine): void {
    this.logger.fatal(...line);
  }

  error(...line: LogLine): void {
    this.logger.error(...line);
  }

  warn(...line: LogLine): void {
    this.logger.warn(...line);
  }

  info(...line: LogLine): void {
    this.logger.info(...line);
  }

  debug(...line: LogLine): void {
    this.logger.debug(...line);
  }

  trace(...line: LogLine): void {
    this.logger.trace(...line);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: each request's logger, made when first used. */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options);
}
