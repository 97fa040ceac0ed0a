import { Catch } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { seeOther } from '../common/html/html-answers';
import { HtmlSectionFilter } from '../common/html/html-section-filter';
import { HtmlSections, type SectionAnswers, type SectionRefusal } from '../common/html/html-sections';
import { DashboardPages } from './dashboard-pages';
import { pathOf } from '../common/http/listener';
import { RouteTable } from '../common/http/route-table';
import { DASHBOARD_BASE } from './dashboard-paths';
import { DashboardRedirect, HOME_PATH, dashboardReturnPage, refererPathOf } from './dashboard-redirect';

const ANSWERS: SectionAnswers = {
  redirectOf: (exception) => (exception instanceof DashboardRedirect ? exception.location : null),
  unexpected: 'The server failed to complete the request. Quote the request id when reporting it.',
  failureLog: 'dashboard request failed with an unexpected error',
};

/**
 * The dashboard answers people, not programs: a redirect is a 303 (htmx
 * requests get `HX-Redirect` so the whole page moves), and a refusal or a
 * failure is an HTML page with the same status and message the JSON API
 * would give. Unexpected failures are logged and show nothing internal. As
 * the dashboard's section (html-sections.ts) it also shows the refusals the
 * HTTP layer makes under its path before any of its handlers runs.
 */
@Catch()
export class DashboardHtmlFilter extends HtmlSectionFilter {
  readonly base = DASHBOARD_BASE;
  readonly listener = 'admin' as const;
  protected readonly answers = ANSWERS;

  constructor(
    private readonly pages: DashboardPages,
    private readonly routes: RouteTable,
    sections: HtmlSections,
  ) {
    super(sections);
  }

  override showRefusal(request: FastifyRequest, reply: FastifyReply, refusal: SectionRefusal): void {
    const { status, message } = refusal;
    // The dashboard's own address typed with a trailing slash: Nest registers routes without one, so no route
    // matches it, yet it names the same place as `/internal/dashboard`, which redirects to where to start.
    if (status === 404 && ['GET', 'HEAD'].includes(request.method) && pathOf(request.url) === `${DASHBOARD_BASE}/`) {
      seeOther(request, reply, DASHBOARD_BASE);
      return;
    }
    // The page the refused request came from, when the browser names one of the dashboard's (a link followed, a form
    // sent): the way back to what the operator was doing. Not the refused address itself, nor the accounts page,
    // which the error page links to anyway.
    const cameFrom = dashboardReturnPage(refererPathOf(request), this.routes);
    const backHref = cameFrom === null || cameFrom === request.url || cameFrom === HOME_PATH ? null : cameFrom;
    void this.pages.send(
      request,
      reply,
      'error',
      { title: `Error ${status}`, status, message, requestId: String(request.id), backHref },
      status,
    );
  }
}
