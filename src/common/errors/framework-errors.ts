import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { answerRefusal, type HtmlSections } from '../html/html-sections';
import { REQUEST_ID_HEADER } from '../request-id/request-id';
import type { ErrorBody } from './error-body';
import { ErrorCode } from './error-code';

/**
 * Errors Fastify's router raises before any hook or Nest code runs (a
 * malformed percent-encoding, an oversized path segment). They get the same
 * error body and request id header as everything else, or, under a
 * section whose pages answer people, that section's error page.
 */
export function frameworkErrorAnswer(
  sections: HtmlSections,
  answered: FrameworkAnswers,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    // No hook runs for these: the answer is timed, counted and logged as the onResponse hook does for the rest.
    reply.raw.once('finish', () => answered.record?.(request, reply));
    answerFrameworkError(error, request, reply, sections);
  };
}

/** Where the router's refusals are recorded, set once the conventions' hooks are installed (they record the rest). */
export interface FrameworkAnswers {
  record: ((request: FastifyRequest, reply: FastifyReply) => void) | null;
}

function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  sections: HtmlSections,
): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const status = tooLong ? 414 : 400;
  const message = tooLong
    ? 'A path segment of the URL is too long.'
    : 'The URL is not valid (malformed percent-encoding).';
  void reply.header(REQUEST_ID_HEADER, String(request.id));
  void reply.header('x-content-type-options', 'nosniff');
  const section = sections.of(request);
  if (section !== null) return answerRefusal(section, request, reply, { status, message, headers: {} });
  const body: ErrorBody = { error: ErrorCode.InvalidArgument, message, request_id: String(request.id) };
  void reply.status(status).send(body);
}
