import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiResponse } from '@nestjs/swagger';
import { MAX_SUBSCRIPTIONS_PER_ACCOUNT } from '../../../libs/webhooks/event-types';
import { ErrorCode } from '../errors/error-code';
import { EVERY_RESPONSE_HEADERS, errorResponse, headerRefs, ref, type ResponseHeaderName } from './openapi-conventions';
import { successSchema, type SuccessBody } from './success-body';

type Json = { [key: string]: unknown };

/** What each code means (api-v1.md "Errors"), used to describe the responses that carry it. */
const ERROR_MEANINGS: Record<ErrorCode, string> = {
  [ErrorCode.Unauthorized]: 'Key missing, malformed, unknown or revoked',
  [ErrorCode.InsufficientScope]: 'The key lacks the required scope, or its principal type is not served here',
  [ErrorCode.Forbidden]: 'The request is not allowed for this principal or value',
  [ErrorCode.NotFound]: 'No such resource, or it belongs to another account (never 403)',
  [ErrorCode.MethodNotAllowed]: 'Method not accepted on the path',
  [ErrorCode.PreconditionFailed]: '`If-Match` differs from the current ETag; nothing written',
  [ErrorCode.LimitReached]: `The account already has ${MAX_SUBSCRIPTIONS_PER_ACCOUNT} webhook subscriptions`,
  [ErrorCode.IdempotencyKeyRequired]: '`Idempotency-Key` header missing',
  [ErrorCode.InvalidArgument]: 'A value is missing or unreadable (including a malformed URL or a NUL character)',
  [ErrorCode.UnsupportedParameter]: 'A query parameter the endpoint does not accept',
  [ErrorCode.InvalidCursor]: 'Cursor malformed, from a different ordering, or anchored to a deleted row',
  [ErrorCode.RateLimited]: 'Window budget exhausted',
  [ErrorCode.Conflict]: 'A concurrent request holds the same key; retry',
  [ErrorCode.Internal]: 'Server-side failure',
};

type ErrorStatus = 400 | 403 | 404 | 409 | 412 | 413 | 414 | 415 | 431;

export interface PublicOperationSpec {
  operationId: string;
  summary: string;
  /** Short rules from the contract, in Markdown. */
  description?: string;
  success: {
    status: 200 | 201;
    description: string;
    body: SuccessBody;
    example: unknown;
    headers?: ResponseHeaderName[];
  };
  /** 304 with the ETag, for `If-None-Match`. */
  notModified?: boolean;
  /** Statuses beyond the shared 400 unsupported_parameter, 401, 429, 500 and 503, with the exact codes each carries. */
  errors?: Partial<Record<ErrorStatus, ErrorCode[]>>;
  /** A JSON body: also documents the 400, 413 and 415 answers every body can get. */
  requestBody?: { description: string; schema: Json; example: unknown; required?: boolean };
  requestHeaders?: Array<{ name: string; required: boolean; description: string; schema?: Json }>;
}

function describeCodes(codes: readonly ErrorCode[]): string {
  return codes
    .map((code, index) =>
      index === 0 ? ERROR_MEANINGS[code] : ERROR_MEANINGS[code].replace(/^[A-Z]/, (c) => c.toLowerCase()),
    )
    .join('; ');
}

/**
 * Documents one public operation completely: its success body inside its
 * envelope with an example, every error status with the exact codes it can
 * carry (one Error schema narrowed per status), and the headers of every
 * response. The parts every operation shares (401, 429, 500, 503, `400
 * unsupported_parameter` and `invalid_argument`, `X-Request-Id`, the
 * rate-limit headers; 413 and 415 for a JSON body) are added here, so no
 * controller repeats them.
 */
export function PublicOperation(spec: PublicOperationSpec): MethodDecorator {
  const { schema, models } = successSchema(spec.success.body);
  const errors: Partial<Record<ErrorStatus, ErrorCode[]>> = { ...spec.errors };
  const add = (status: ErrorStatus, ...codes: ErrorCode[]): void => {
    errors[status] = [...new Set([...(errors[status] ?? []), ...codes])];
  };
  // Any request: an unknown query parameter, a malformed URL or a NUL character in the path; an overlong path segment.
  add(400, ErrorCode.UnsupportedParameter, ErrorCode.InvalidArgument);
  add(414, ErrorCode.InvalidArgument);
  add(431, ErrorCode.InvalidArgument);
  if (spec.requestBody !== undefined) {
    add(413, ErrorCode.InvalidArgument);
    add(415, ErrorCode.InvalidArgument);
  }
  const statusNotes: Partial<Record<ErrorStatus, string>> = {
    413: 'Body larger than the server accepts',
    414: 'A path segment of the URL is too long',
    415: 'Body is not JSON (`Content-Type: application/json`)',
    431: 'The request line or its headers are larger than the server reads (a long `cursor` included); the connection is closed',
  };

  const decorators: Array<MethodDecorator | ClassDecorator> = [
    ApiOperation({ operationId: spec.operationId, summary: spec.summary, description: spec.description }),
    ApiHeader({
      name: 'X-Request-Id',
      required: false,
      description: 'Optional. Echoed in the response when it is 1 to 64 characters of `A-Z a-z 0-9 - _ . : + / =`.',
      schema: { type: 'string' },
    }),
    ...(spec.requestHeaders ?? []).map((header) =>
      ApiHeader({ ...header, schema: header.schema ?? { type: 'string' } }),
    ),
    ApiResponse({
      status: spec.success.status,
      description: spec.success.description,
      headers: headerRefs([...EVERY_RESPONSE_HEADERS, ...(spec.success.headers ?? [])]),
      schema: schema,
      example: spec.success.example,
    }),
    ...Object.entries(errors).map(([status, codes]) =>
      ApiResponse({
        status: Number(status),
        ...(errorResponse(statusNotes[Number(status) as ErrorStatus] ?? describeCodes(codes), codes) as object),
      }),
    ),
    ApiResponse({ status: 401, ...ref('responses', 'Unauthorized') }),
    ApiResponse({ status: 429, ...ref('responses', 'RateLimited') }),
    ApiResponse({ status: 500, ...ref('responses', 'Internal') }),
    ApiResponse({ status: 503, ...ref('responses', 'Unavailable') }),
  ];
  if (models.length > 0) decorators.push(ApiExtraModels(...models));
  if (spec.notModified === true) {
    decorators.push(
      ApiResponse({
        status: 304,
        description: '`If-None-Match` matched the current ETag: no body.',
        headers: headerRefs([...EVERY_RESPONSE_HEADERS, 'ETag']),
      }),
    );
  }
  if (spec.requestBody !== undefined) {
    decorators.push(
      ApiBody({
        description: spec.requestBody.description,
        required: spec.requestBody.required ?? true,
        schema: spec.requestBody.schema as never,
        examples: { example: { summary: 'Example', value: spec.requestBody.example } },
      }),
    );
  }
  return applyDecorators(...decorators);
}
