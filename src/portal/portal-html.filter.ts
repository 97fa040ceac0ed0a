import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
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
    if (exception instanceof PortalRedirect) {
      if (request.headers['hx-request'] === 'true') {
        void reply.status(200).header('hx-redirect', exception.location).send('');
      } else {
        void reply.status(303).header('location', exception.location).send('');
      }
      return;
    }
    let status = 500;
    let message = 'The portal failed to complete the request. Quote the request id when reporting it.';
    let retryAfter: string | null = null;
    if (exception instanceof DomainError) {
      status = exception.status;
      message = exception.message;
      void reply.headers(exception.headers);
      if (exception.code === ErrorCode.RateLimited) retryAfter = exception.headers['retry-after'] ?? null;
    } else if (exception instanceof HttpException && exception.getStatus() < 500) {
      status = exception.getStatus();
      message = exception.message;
    }
    if (status === 404) message = NOT_FOUND_MESSAGE;
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
