import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiExtraModels, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-code';
import { errorResponse, headerRefs, type ResponseHeaderName } from './openapi-conventions';
import { successSchema, type SuccessBody } from './success-body';

/** The internal API has no account budget: its errors carry the request id, and a 429 the failure budget's figures. */
const internalError = (description: string, code: ErrorCode): object =>
  errorResponse(description, [code], ['X-Request-Id']);

const failureBudgetHeader = (description: string): object => ({
  description,
  required: true,
  schema: { type: 'integer', minimum: 0 },
});

/** The refusal of a client address that spent its failure budget (RATE_LIMIT_FAILURES_PER_CLIENT). */
const FAILURE_BUDGET_REFUSAL = {
  ...errorResponse(
    'Too many requests with a wrong or missing token from this client address in the current minute (RATE_LIMIT_FAILURES_PER_CLIENT); retry after `Retry-After` seconds',
    [ErrorCode.RateLimited],
    ['X-Request-Id', 'Retry-After'],
  ),
  ...{
    headers: {
      ...headerRefs(['X-Request-Id', 'Retry-After']),
      'X-RateLimit-Limit': failureBudgetHeader('The failures a client address may make per window.'),
      'X-RateLimit-Remaining': failureBudgetHeader('`0`: none left in this window.'),
      'X-RateLimit-Reset': failureBudgetHeader('Unix time in seconds at which the window ends.'),
    },
  },
};

/**
 * Puts a controller's routes in the internal document (served on the admin
 * listener only) under one tag, with the error answers every internal route
 * shares. Routes under `/internal` never reach the public document: the
 * document builder splits by the listener rule.
 */
export function InternalOperations(tag: string): ClassDecorator {
  return applyDecorators(
    ApiTags(`Internal: ${tag}`),
    ApiResponse({ status: 400, ...internalError('Invalid body or value', ErrorCode.InvalidArgument) }),
    ApiResponse({
      status: 401,
      ...errorResponse('Admin token missing or wrong', [ErrorCode.Unauthorized], ['X-Request-Id', 'WWW-Authenticate']),
    }),
    ApiResponse({ status: 404, ...internalError('No such resource', ErrorCode.NotFound) }),
    ApiResponse({ status: 414, ...internalError('A path segment of the URL is too long', ErrorCode.InvalidArgument) }),
    ApiResponse({
      status: 431,
      ...internalError(
        'The request line or its headers are larger than the server reads; the connection is closed',
        ErrorCode.InvalidArgument,
      ),
    }),
    ApiResponse({ status: 429, ...FAILURE_BUDGET_REFUSAL }),
    ApiResponse({
      status: 500,
      ...internalError(
        'Unexpected server-side failure, logged with the request id; nothing internal is shown',
        ErrorCode.Internal,
      ),
    }),
    ApiResponse({
      status: 503,
      ...errorResponse(
        'The service could not reach its database for this request (none of its connections came free within `DB_CONNECT_TIMEOUT_SECONDS`, or a new one could not be opened); retry after `Retry-After` seconds',
        [ErrorCode.Internal],
        ['X-Request-Id', 'Retry-After'],
      ),
    }),
  );
}

/**
 * The answers to a body every method but GET can get, whether or not the
 * route reads one: the body is refused as it is read, before the route.
 */
export function internalBodyRefusalResponses(): Record<string, object> {
  return {
    413: internalError('Body larger than the server accepts', ErrorCode.InvalidArgument),
    415: internalError('Body is not JSON (`Content-Type: application/json`)', ErrorCode.InvalidArgument),
  };
}

/** The refusals an internal route adds to the shared ones, each with when the internal contract gives it. */
export interface InternalRefusals {
  /** `403 forbidden` */
  forbidden?: string;
  /** `409 conflict` */
  conflict?: string;
}

/** Where InternalRefusals leaves them for the document builder (internalRefusalResponses). */
export const REFUSALS_EXTENSION = 'x-internal-refusals';

/**
 * Documents an internal route's own refusals beside the ones every internal
 * route shares. Carried as an extension, not as responses: a route with
 * responses of its own would lose the success answer the scan gives it.
 */
export function InternalRefusals(refusals: InternalRefusals): MethodDecorator {
  return ApiExtension(REFUSALS_EXTENSION, refusals);
}

/** The responses of the refusals InternalRefusals recorded, by status. */
export function internalRefusalResponses(refusals: InternalRefusals): Record<string, object> {
  return {
    ...(refusals.forbidden === undefined ? {} : { 403: internalError(refusals.forbidden, ErrorCode.Forbidden) }),
    ...(refusals.conflict === undefined ? {} : { 409: internalError(refusals.conflict, ErrorCode.Conflict) }),
  };
}

/** An internal route's success answer: its status, and its body inside the `{data}` envelope. */
export interface InternalSuccessSpec {
  status: 200 | 201 | 202;
  description: string;
  body: SuccessBody;
  /** Beyond `X-Request-Id`, which every answer carries. */
  headers?: ResponseHeaderName[];
}

/**
 * Documents what an internal route answers on success, field by field, so a
 * tool or test rig generated from `/internal/openapi.json` reads the same
 * shapes the internal contract's tables give.
 */
export function InternalSuccess(spec: InternalSuccessSpec): MethodDecorator {
  const { schema, models } = successSchema(spec.body);
  return applyDecorators(
    ApiResponse({
      status: spec.status,
      description: spec.description,
      headers: headerRefs(['X-Request-Id', ...(spec.headers ?? [])]),
      schema,
    }),
    ...(models.length > 0 ? [ApiExtraModels(...models)] : []),
  );
}
