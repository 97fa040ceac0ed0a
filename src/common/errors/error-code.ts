/** The stable machine codes of the error body; clients branch on these. */
export enum ErrorCode {
  Unauthorized = 'unauthorized',
  InsufficientScope = 'insufficient_scope',
  Forbidden = 'forbidden',
  NotFound = 'not_found',
  MethodNotAllowed = 'method_not_allowed',
  PreconditionFailed = 'precondition_failed',
  LimitReached = 'limit_reached',
  IdempotencyKeyRequired = 'idempotency_key_required',
  InvalidArgument = 'invalid_argument',
  UnsupportedParameter = 'unsupported_parameter',
  InvalidCursor = 'invalid_cursor',
  RateLimited = 'rate_limited',
  /** Internal API only: the operation conflicts with the resource's state. */
  Conflict = 'conflict',
  Internal = 'internal',
}

export const ERROR_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.InsufficientScope]: 403,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.MethodNotAllowed]: 405,
  [ErrorCode.PreconditionFailed]: 412,
  [ErrorCode.LimitReached]: 409,
  [ErrorCode.IdempotencyKeyRequired]: 400,
  [ErrorCode.InvalidArgument]: 400,
  [ErrorCode.UnsupportedParameter]: 400,
  [ErrorCode.InvalidCursor]: 400,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.Internal]: 500,
};
