import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-code';
import { errorResponse } from './openapi-conventions';

/** The internal API has no account budget, so its errors carry only the request id (a 429's `Retry-After` too). */
const internalError = (description: string, code: ErrorCode): object =>
  errorResponse(description, [code], ['X-Request-Id']);

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
    ApiResponse({ status: 401, ...internalError('Admin token missing or wrong', ErrorCode.Unauthorized) }),
    ApiResponse({ status: 404, ...internalError('No such resource', ErrorCode.NotFound) }),
    ApiResponse({
      status: 429,
      ...errorResponse(
        'Too many requests with a wrong or missing token from this client address in the current minute (RATE_LIMIT_FAILURES_PER_CLIENT); retry after `Retry-After` seconds',
        [ErrorCode.RateLimited],
        ['X-Request-Id', 'Retry-After'],
      ),
    }),
  );
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
