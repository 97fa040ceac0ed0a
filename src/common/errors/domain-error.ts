import { ERROR_STATUS, ErrorCode } from './error-code';

/**
 * The one error type services throw. The exception filter turns it into
 * `{error, message, request_id}` with the status of its code, unless a
 * different status is given (a 413 or 415 that still speaks `invalid_argument`).
 */
export class DomainError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = options.status ?? ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }

  readonly headers: Record<string, string>;

  static notFound(what = 'Resource'): DomainError {
    return new DomainError(ErrorCode.NotFound, `${what} not found.`);
  }

  static invalidArgument(message: string): DomainError {
    return new DomainError(ErrorCode.InvalidArgument, message);
  }

  static conflict(message: string): DomainError {
    return new DomainError(ErrorCode.Conflict, message);
  }
}
