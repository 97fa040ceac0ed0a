import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from '../request-id/request-id';
import type { ErrorBody } from './error-body';
import { ErrorCode } from './error-code';

/**
 * Errors Fastify's router raises before any hook or Nest code runs (a
 * malformed percent-encoding, an oversized path segment). They get the same
 * error body and request id header as everything else.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const body: ErrorBody = {
    error: ErrorCode.InvalidArgument,
    message: tooLong ? 'A path segment of the URL is too long.' : 'The URL is not valid (malformed percent-encoding).',
    request_id: String(request.id),
  };
  void reply
    .status(tooLong ? 414 : 400)
    .header(REQUEST_ID_HEADER, String(request.id))
    .send(body);
}
