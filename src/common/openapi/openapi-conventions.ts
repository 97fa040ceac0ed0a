import { ErrorCode } from '../errors/error-code';
import { PLAUSIBLE_REQUEST_ID } from '../request-id/request-id';

/**
 * The parts of the document every public operation shares: headers, the
 * Error schema and the responses that do not depend on the operation. The
 * operation decorator refers to them by name; the document builder adds
 * them to `components` once.
 */

type Json = { [key: string]: unknown };

export const ref = (kind: 'schemas' | 'headers' | 'responses' | 'parameters', name: string): { $ref: string } => ({
  $ref: `#/components/${kind}/${name}`,
});

const integerHeader = (description: string, required: boolean): Json => ({
  description,
  required,
  schema: { type: 'integer', minimum: 0 },
});

/** Response headers, by their names in `components.headers`. */
export const HEADER_COMPONENTS = {
  'X-Request-Id': {
    description:
      'On every response. Echoes a caller-supplied `X-Request-Id` when it is 1 to 64 characters of `A-Z a-z 0-9 - _ . : + / =`; otherwise a fresh UUID. Equals `request_id` in error bodies.',
    required: true,
    schema: { type: 'string', pattern: PLAUSIBLE_REQUEST_ID.source },
  },
  'X-RateLimit-Limit': integerHeader(
    "The account's budget in the current 60-second window (reads: GET, HEAD; writes: POST, PATCH, DELETE). Sent on every response to an authenticated request that reached the budget (a body refused as it is read, malformed JSON, 413 or 415, included: the request is counted before its body is read); not on a `401` nor a route miss (404, 405), which are not counted.",
    false,
  ),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.', false),
  'X-RateLimit-Reset': integerHeader('Unix time in seconds at which the current window ends.', false),
  'Retry-After': integerHeader(
    'Seconds to wait before trying again: until the window resets on a `429`; a few seconds on a `503`.',
    true,
  ),
  'WWW-Authenticate': {
    description: 'On a `401`: the scheme a request must use, `Bearer` with the realm of its listener.',
    required: true,
    schema: { type: 'string', enum: ['Bearer realm="events-api"', 'Bearer realm="events-api-internal"'] },
  },
  ETag: {
    description:
      'Strong validator computed over the exact response body; changes only when a visible value changes. Send it back in `If-Match` or `If-None-Match`.',
    required: true,
    schema: { type: 'string', pattern: '^"[^"]*"$' },
  },
  Location: {
    description: 'Path of the created event.',
    required: true,
    schema: { type: 'string', examples: ['/v1/events/evt_01J5Z7Q6W8'] },
  },
  'Idempotent-Replayed': {
    description:
      'Present, as `true`, when the response is the stored response of an earlier request with the same `Idempotency-Key`.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
  'Cache-Control': {
    description: '`no-store`: the body holds signing secrets, which no cache along the way may keep.',
    required: true,
    schema: { type: 'string', enum: ['no-store'] },
  },
  Link: {
    description: 'RFC 8288: `<path?cursor=…>; rel="next"` when older rows follow this page; absent on the last page.',
    required: false,
    schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$' },
  },
  Allow: {
    description: 'The methods the path accepts (HEAD wherever GET).',
    required: true,
    schema: { type: 'string', examples: ['GET, HEAD, POST'] },
  },
} satisfies Record<string, Json>;

export type ResponseHeaderName = keyof typeof HEADER_COMPONENTS;

/** Headers on every public response (the rate-limit trio is absent before authentication succeeds). */
export const EVERY_RESPONSE_HEADERS: readonly ResponseHeaderName[] = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

export function headerRefs(names: readonly ResponseHeaderName[]): Record<string, { $ref: string }> {
  return Object.fromEntries(names.map((name) => [name, ref('headers', name)]));
}

/** The contract's error body. `error` is one of the codes; each response narrows it to the codes that status can carry. */
export const ERROR_SCHEMAS: Record<string, Json> = {
  ErrorCode: {
    type: 'string',
    enum: Object.values(ErrorCode),
    description:
      'Stable machine code; clients branch on it. `conflict` is answered by `POST /v1/events` when a concurrent request holds the same `Idempotency-Key` for more than 5 seconds (retry), and by the internal API.',
  },
  Error: {
    type: 'object',
    required: ['error', 'message', 'request_id'],
    additionalProperties: false,
    properties: {
      error: ref('schemas', 'ErrorCode'),
      message: { type: 'string', minLength: 1, description: 'Human sentence; its wording may change.' },
      request_id: { type: 'string', description: 'Same as the `X-Request-Id` header.' },
    },
  },
};

/** An error response body narrowed to the codes its status can carry. */
export function errorBodySchema(codes: readonly ErrorCode[]): Json {
  return {
    allOf: [ref('schemas', 'Error'), { type: 'object', properties: { error: { type: 'string', enum: [...codes] } } }],
  };
}

export function errorResponse(
  description: string,
  codes: readonly ErrorCode[],
  headers: readonly ResponseHeaderName[] = EVERY_RESPONSE_HEADERS,
): Json {
  const example = { error: codes[0], message: description, request_id: '4f6c2a1e-8d2b-4a5e-9a43-0f2b6c1d7e90' };
  return {
    description: `${description} (\`error\`: ${codes.map((code) => `\`${code}\``).join(', ')})`,
    headers: headerRefs(headers),
    content: { 'application/json': { schema: errorBodySchema(codes), example } },
  };
}

/** Responses every public operation can give, by their names in `components.responses`. */
export const RESPONSE_COMPONENTS: Record<string, Json> = {
  Unauthorized: errorResponse(
    'Key missing, malformed, unknown or revoked',
    [ErrorCode.Unauthorized],
    [...EVERY_RESPONSE_HEADERS, 'WWW-Authenticate'],
  ),
  RateLimited: errorResponse(
    'Window budget exhausted; retry after `Retry-After` seconds',
    [ErrorCode.RateLimited],
    [...EVERY_RESPONSE_HEADERS, 'Retry-After'],
  ),
  Internal: errorResponse('Unexpected server-side failure, logged with the request id; nothing internal is shown', [
    ErrorCode.Internal,
  ]),
  Unavailable: errorResponse(
    'The service could not reach its database for this request; retry after `Retry-After` seconds',
    [ErrorCode.Internal],
    [...EVERY_RESPONSE_HEADERS, 'Retry-After'],
  ),
};

/** Request headers every public operation accepts. */
export const PARAMETER_COMPONENTS: Record<string, Json> = {
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Optional. Echoed in the response when it is 1 to 64 characters of `A-Z a-z 0-9 - _ . : + / =`.',
    schema: { type: 'string' },
  },
};
