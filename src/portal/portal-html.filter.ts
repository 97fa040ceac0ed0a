import { Catch } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { portalAccountOf } from '../common/auth-context/portal-access';
import { HtmlSectionFilter } from '../common/html/html-section-filter';
import { HtmlSections, type SectionAnswers, type SectionRefusal } from '../common/html/html-sections';
import { PortalPages } from './portal-pages';
import { PORTAL_BASE } from './portal-paths';
import { PortalRedirect } from './portal-redirect';

/** One answer for every 404: another account's id and an unknown id must be indistinguishable. */
const NOT_FOUND_MESSAGE = 'There is no such page in your portal: the link may be old, or the id mistyped.';

const ANSWERS: SectionAnswers = {
  redirectOf: (exception) => (exception instanceof PortalRedirect ? exception.location : null),
  unexpected: 'The portal failed to complete the request. Quote the request id when reporting it.',
  failureLog: 'portal request failed with an unexpected error',
  messageFor: (status, message) => (status === 404 ? NOT_FOUND_MESSAGE : message),
};

/**
 * The portal answers people: a redirect is a 303 (htmx requests get
 * `HX-Redirect` so the whole page moves), and a refusal or failure is an
 * HTML page with the status the JSON API would give. A 429 page says how
 * long to wait (and carries `Retry-After`); a 404 page is the same whatever
 * was not found, so it tells nothing about other accounts. As the portal's
 * section (html-sections.ts) it also shows the refusals the HTTP layer makes
 * under `/portal` before any of its handlers runs.
 */
@Catch()
export class PortalHtmlFilter extends HtmlSectionFilter {
  readonly base = PORTAL_BASE;
  readonly listener = 'public' as const;
  protected readonly answers = ANSWERS;

  constructor(
    private readonly pages: PortalPages,
    sections: HtmlSections,
  ) {
    super(sections);
  }

  override showRefusal(request: FastifyRequest, reply: FastifyReply, refusal: SectionRefusal): Promise<FastifyReply> {
    const { status } = refusal;
    return this.pages.send(
      request,
      reply,
      'error',
      {
        title: status === 429 ? 'Too many requests' : status === 401 ? 'Session ended' : `Error ${status}`,
        status,
        message: refusal.message,
        retryAfter: status === 429 ? (refusal.headers['retry-after'] ?? null) : null,
        // A 429 with a session is the account's budget; without one, the budget of failures per client address.
        accountBudget: portalAccountOf(request) !== undefined,
        requestId: status >= 500 ? String(request.id) : null,
      },
      status,
    );
  }
}
