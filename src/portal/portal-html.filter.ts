import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../common/errors/error-code';
import { pageRefusal, seeOther } from '../common/html/html-answers';
import { PortalPages } from './portal-pages';
import { PortalRedirect } from './portal-redirect';

/** One answer for every 404: another account's id and an unknown id must be indistinguishable. */
const NOT_FOUND_MESSAGE = 'There is no such page in your portal: the link may be old, or the id mistyped.';

/**
 * The portal answers people: a redirect is a 303 (htmx requests get
 * `HX-Redirect` so the whole page moves), and a refusal or failure is an
 * HTML page with the status the JSON API would give. A 429 page says how
 * long to wait (and carries `Retry-After`); a 404 page is the same whatever
 * was not found, so it tells nothing about other accounts.
 */
@Catch()
export class PortalHtmlFilter implements ExceptionFilter {
  constructor(private readonly pages: PortalPages) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (reply.sent) return;
    if (exception instanceof PortalRedirect) return seeOther(request, reply, exception.location);
    const refusal = pageRefusal(
      exception,
      'The portal failed to complete the request. Quote the request id when reporting it.',
    );
    const { status, domainError } = refusal;
    let retryAfter: string | null = null;
    if (domainError !== null) {
      void reply.headers(domainError.headers);
      if (domainError.code === ErrorCode.RateLimited) retryAfter = domainError.headers['retry-after'] ?? null;
    }
    const message = status === 404 ? NOT_FOUND_MESSAGE : refusal.message;
    if (status >= 500) request.log.error({ err: exception }, 'portal request failed with an unexpected error');
    void this.pages.send(
      request,
      reply,
      'error',
      {
        title: status === 429 ? 'Too many requests' : status === 401 ? 'Session ended' : `Error ${status}`,
        status,
        message,
        retryAfter,
        requestId: status >= 500 ? String(request.id) : null,
      },
      status,
    );
  }
}
