import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pageRefusal, seeOther } from '../common/html/html-answers';
import { DashboardPages } from './dashboard-pages';
import { DashboardRedirect } from './dashboard-redirect';

/**
 * The dashboard answers people, not programs: a redirect is a 303 (htmx
 * requests get `HX-Redirect` so the whole page moves), and a refusal or a
 * failure is an HTML page with the same status and message the JSON API
 * would give. Unexpected failures are logged and show nothing internal.
 */
@Catch()
export class DashboardHtmlFilter implements ExceptionFilter {
  constructor(private readonly pages: DashboardPages) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (reply.sent) return;
    if (exception instanceof DashboardRedirect) return seeOther(request, reply, exception.location);
    const { status, message } = pageRefusal(
      exception,
      'The server failed to complete the request. Quote the request id when reporting it.',
    );
    if (status >= 500) request.log.error({ err: exception }, 'dashboard request failed with an unexpected error');
    this.pages.send(
      request,
      reply,
      'error',
      { title: `Error ${status}`, status, message, requestId: String(request.id) },
      status,
    );
  }
}
