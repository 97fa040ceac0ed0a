import { applyDecorators } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-code';
import { errorResponse } from './openapi-conventions';

/** The internal API has no rate limit, so its errors carry only the request id. */
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
  );
}
