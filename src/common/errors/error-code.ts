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
  /**
   * The operation conflicts with the resource's state: on the public API, a
   * create whose Idempotency-Key a concurrent request still holds
   * (POST /v1/events); on the internal API, the dashboard and the portal, a
   * state that refuses the operation (an unpublishable event, a disabled
   * webhook, an order that is not pending).
   */
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
