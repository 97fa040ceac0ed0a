import type { FastifyReply, FastifyRequest } from 'fastify';
import { listenerOf, pathOf, type Listener } from '../http/listener';
import { loggableError } from '../logging/loggable-error';
import { logServerFailure } from '../errors/database-unavailable';
import { pageRefusal, seeOther } from './html-answers';

/** What an error page says: the status and message the JSON API would give, and the headers that go with them. */
export interface SectionRefusal {
  status: number;
  message: string;
  /** `Allow` of a 405, `Retry-After` of a 429: sent with the page as with the JSON body. */
  headers: Record<string, string>;
}

/**
 * A part of the service whose pages answer people (the dashboard, the
 * portal): everything under `base` on `listener`. On the other listener its
 * paths are unknown paths like any other, answered in the API's error body.
 */
export interface HtmlSection {
  readonly base: string;
  readonly listener: Listener;
  /** Sends the section's own error page, with `refusal.status` and a link back into the section. */
  showRefusal(request: FastifyRequest, reply: FastifyReply, refusal: SectionRefusal): void | Promise<unknown>;
}

/** Said on a section's page for a path no route serves. */
export const NO_PAGE_HERE = 'There is no page at this address: the link may be old or mistyped.';
/** Said for an address that only takes a form (a reload or a bookmark of where a form was sent). */
export const FORM_ADDRESS_ONLY =
  'This address is where a form is sent, not a page to open (a reload or a bookmark of it lands here). Go back to the page the form is on.';
/** Said for a form sent to an address that is only a page. */
export const PAGE_ADDRESS_ONLY = 'This address is a page to open, not one a form is sent to.';

/**
 * The people's words for a route miss, which the JSON API describes by path
 * and method: no page here (404), or not the way this address is used (405).
 */
export function routeMissRefusal(refusal: SectionRefusal): SectionRefusal {
  if (refusal.status === 404) return { ...refusal, message: NO_PAGE_HERE };
  if (refusal.status !== 405) return refusal;
  const allowed = (refusal.headers['allow'] ?? '').split(/,\s*/);
  return { ...refusal, message: allowed.includes('GET') ? PAGE_ADDRESS_ONLY : FORM_ADDRESS_ONLY };
}

/**
 * Answers a refusal with the section's error page. Every error page of a
 * section goes through here, whether its own handlers refused the request or
 * the HTTP layer did before any handler ran (a route miss, a 405, a URL the
 * router cannot read, a body too large or in another media type, the failure
 * budget), so all of them keep their status and headers and look the same.
 */
export function answerRefusal(
  section: HtmlSection,
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: SectionRefusal,
): void {
  void reply.headers(refusal.headers);
  // htmx swaps no 4xx or 5xx answer, so a part of a page it refreshes (the delivery log) would silently stay as it
  // was when the session has ended (401) or the budget is spent (429). HX-Refresh has the browser reload the page
  // it shows, which then gets this same refusal as a whole page, said and announced as every page is. The simplest
  // correct answer: the status stays, and no URL is needed (HX-Redirect would take the page's address from
  // HX-Current-URL, which the client writes), nor a fragment that fits the target (a swappable message would have to
  // be a 2xx, or every page would need htmx's response handling changed). Only for a GET, which the reload repeats:
  // the pages' htmx only ever refreshes, and a reload after a refused post would show the page without the refusal.
  if (request.headers['hx-request'] === 'true' && request.method === 'GET') void reply.header('hx-refresh', 'true');
  // A page that cannot be rendered still answers, with its status and message as text, and never fails the process.
  const fallBack = (error: unknown): void => {
    request.log.error({ error: loggableError(error) }, 'an error page could not be rendered');
    if (!reply.sent) void reply.status(refusal.status).type('text/plain; charset=utf-8').send(refusal.message);
  };
  try {
    const shown = section.showRefusal(request, reply, refusal);
    if (shown instanceof Promise) shown.catch(fallBack);
  } catch (error) {
    fallBack(error);
  }
}

/** How a section's exception filter answers: its redirect, its words for an unexpected failure and for a refusal. */
export interface SectionAnswers {
  /** The location when `exception` is the section's redirect (a 303 after a form post), else null. */
  redirectOf(exception: unknown): string | null;
  /** Said for an unexpected failure (a 500), which shows nothing internal. */
  unexpected: string;
  /** Logged with an unexpected failure. */
  failureLog: string;
  /** The section's words for a refusal, when they differ from the JSON API's. */
  messageFor?(status: number, message: string): string;
}

/**
 * A section's exception filter, in one place: its redirect becomes a 303,
 * any other exception the section's error page with the status, message and
 * headers the JSON API would give (answerRefusal), an unexpected one logged.
 */
export function answerException(
  section: HtmlSection,
  answers: SectionAnswers,
  request: FastifyRequest,
  reply: FastifyReply,
  exception: unknown,
): void {
  if (reply.sent) return;
  const location = answers.redirectOf(exception);
  if (location !== null) return seeOther(request, reply, location);
  const { status, message, headers } = pageRefusal(exception, answers.unexpected);
  logServerFailure(request.log, exception, status, answers.failureLog);
  answerRefusal(section, request, reply, {
    status,
    message: answers.messageFor?.(status, message) ?? message,
    headers,
  });
}

/**
 * The sections the service serves, by where they live. The exception filter
 * of the HTTP layer asks it for every error, so a request under a section's
 * path is answered with that section's page, and every other one (the APIs)
 * with the JSON error body exactly as before. Made at start, before Nest,
 * like the route table: the router's own errors are answered before Nest runs.
 */
export class HtmlSections {
  private readonly sections = new Map<string, HtmlSection>();

  /** Each section adds itself once its pages can be rendered; a second add of the same place replaces the first. */
  add(section: HtmlSection): void {
    this.sections.set(`${section.listener} ${section.base}`, section);
  }

  /** The section a request is under, by the listener that took it and its path; null for the APIs. */
  of(request: FastifyRequest): HtmlSection | null {
    const listener = listenerOf(request.raw);
    const path = pathOf(request.url);
    for (const section of this.sections.values()) {
      if (section.listener !== listener) continue;
      if (path === section.base || path.startsWith(`${section.base}/`)) return section;
    }
    return null;
  }
}
