import { applyDecorators } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-code';
import { errorResponse } from './openapi-conventions';

/**
 * Puts a controller's routes in the internal document (served on the admin
 * listener only) under one tag, with the error answers every internal route
 * shares. Routes under `/internal` never reach the public document: the
 * document builder splits by the listener rule.
 */
export function InternalOperations(tag: string): ClassDecorator {
  return applyDecorators(
    ApiTags(`Internal: ${tag}`),
    ApiResponse({ status: 400, ...(errorResponse('Invalid body or value', [ErrorCode.InvalidArgument]) as object) }),
    ApiResponse({
      status: 401,
      ...(errorResponse('Admin token missing or wrong', [ErrorCode.Unauthorized]) as object),
    }),
    ApiResponse({ status: 404, ...(errorResponse('No such resource', [ErrorCode.NotFound]) as object) }),
  );
}
