import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { csrfTokenFor } from './dashboard-csrf';
import { dashboardFolder } from './dashboard-files';
import { DASHBOARD_BASE, dashboardPath, withQuery } from './dashboard-paths';
import { sessionOf } from './dashboard-request';
import { DashboardSessionsService } from './dashboard-sessions.service';
import * as format from '../common/html/html-format';
import { withSharedPartials } from '../common/html/html-partials';
import { PageFocus } from '../common/html/page-focus';

/**
 * Headers of every dashboard page: nothing cached (pages show keys and
 * secrets once), scripts and styles only from this service, never framed.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/** Renders the Eta templates in `views/` (HTML-escaped by default) into complete pages. */
@Injectable()
export class DashboardPages {
  private readonly eta = withSharedPartials(
    new Eta({ views: dashboardFolder('views'), cache: true, autoEscape: true }),
  );

  constructor(private readonly sessions: DashboardSessionsService) {}

  send(
    request: FastifyRequest,
    reply: FastifyReply,
    view: string,
    data: Record<string, unknown>,
    status = 200,
  ): FastifyReply {
    const html = this.eta.render(view, {
      ...data,
      csrf: csrfTokenFor(request, reply),
      flashes: this.sessions.takeFlashes(request),
      signedIn: sessionOf(request) !== null,
      base: DASHBOARD_BASE,
      path: dashboardPath,
      withQuery,
      format,
      focus: new PageFocus(),
    });
    // Time from the request's arrival to the rendered page, for the benchmark and the browser's network panel.
    void reply.header('server-timing', `page;dur=${reply.elapsedTime.toFixed(1)}`);
    return reply.status(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
  }
}
