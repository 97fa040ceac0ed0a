import { Controller, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { MAX_LINK_TTL_SECONDS, MIN_LINK_TTL_SECONDS, PortalLinksService } from '../portal/portal-links.service';
import { HtmlForm } from '../common/html/html-form';
import { instant } from '../common/html/html-format';
import { DashboardAccountViews } from './dashboard-account-views.service';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { dashboardPath } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { DashboardSessionsService } from './dashboard-sessions.service';
import { madePortalLinkText } from './made-portal-link';

/** The account pages' path segment, and the kind of account each names. */
const ACCOUNT_KINDS = new Map([
  ['organisers', 'organiser'],
  ['venues', 'venue'],
] as const);

/** The kind of account a page path names; any other path segment is not a page. */
function accountTypeOf(accountKind: string): 'organiser' | 'venue' {
  const accountType = ACCOUNT_KINDS.get(accountKind as 'organisers' | 'venues');
  if (accountType === undefined) throw DomainError.notFound('Page');
  return accountType;
}

/** The form's "Seconds the link may be opened in", refused in the label's words rather than the API's `ttlSeconds`. */
function readTtlField(text: string): number {
  const seconds = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= MIN_LINK_TTL_SECONDS && seconds <= MAX_LINK_TTL_SECONDS)) {
    throw DomainError.invalidArgument(
      `Seconds the link may be opened in must be a whole number from ${MIN_LINK_TTL_SECONDS} to ${MAX_LINK_TTL_SECONDS}.`,
    );
  }
  return seconds;
}

/**
 * Mints a webhook-portal link from an account's page, and ends the account's
 * portal sessions and unopened links. The link is shown
 * once, as a message on the page the redirect leads to (Post/Redirect/Get):
 * a reload neither mints another nor shows this one again. A refused link
 * form is shown again on the account's page, as typed, with the refusal
 * beside the seconds or at the form's top.
 */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('session')
@Controller('internal/dashboard')
export class DashboardPortalLinksController {
  constructor(
    private readonly links: PortalLinksService,
    private readonly accounts: DashboardAccountViews,
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
  ) {}

  @Post(':accountKind/:accountId/portal-link')
  async mint(
    @Param('accountKind') accountKind: string,
    @Param('accountId') accountId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const accountType = accountTypeOf(accountKind);
    const form = new HtmlForm(request);
    const typed = { ttlSeconds: form.text('ttlSeconds'), readOnly: form.checked('readOnly') };
    // Which part of the form a refusal is shown beside: the seconds typed, or the form as a whole.
    let refused: 'ttlSeconds' | 'form' = 'ttlSeconds';
    try {
      const ttlSeconds = typed.ttlSeconds === null ? undefined : readTtlField(typed.ttlSeconds);
      refused = 'form';
      // A venue's id under /organisers/ (or the reverse) is not found: the link would wait for a page that is not there.
      const link = await this.links.mint({ accountId, accountType, readOnly: typed.readOnly, ttlSeconds });
      // The link is a credential until opened: it is kept sealed, like a new key, never in a message's plain text.
      // Each link made is kept beside any other still waiting for the page (two tabs, two instances), with what
      // it allows: a second link must neither hide the first nor be shown under the first one's message.
      this.sessions.addFlash(request, dashboardPath(accountKind, accountId), madePortalLinkText(link));
      this.sessions.flash(request, {
        kind: 'success',
        text: `Portal link${link.readOnly ? ' (read only)' : ''} made: it opens once, until ${instant(link.expiresAt)}, and is shown below once.`,
      });
    } catch (error) {
      // A refusal (a ttl out of range, a worker that knows no portal address) is said on the form; not found stays 404.
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      const view =
        accountType === 'organiser'
          ? await this.accounts.organiserPage(accountId)
          : await this.accounts.venuePage(accountId);
      const portalLinkErrors = { [refused]: refused === 'form' ? `No link made: ${error.message}` : error.message };
      return this.pages.send(
        request,
        reply,
        accountType,
        { ...view, portalLinks: [], portalLinkForm: typed, portalLinkErrors },
        error.status,
      );
    }
    throw new DashboardRedirect(dashboardPath(accountKind, accountId));
  }

  /** Ends every portal session and unopened link of the account, on every instance (a leaked link among them). */
  @Post(':accountKind/:accountId/portal-sessions/revoke')
  async revoke(
    @Param('accountKind') accountKind: string,
    @Param('accountId') accountId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const { revoked } = await this.links.revoke(accountId, accountTypeOf(accountKind));
    this.sessions.flash(request, {
      kind: 'success',
      text: `Portal access ended: ${revoked} of its sessions and unopened links, on every instance.`,
    });
    throw new DashboardRedirect(dashboardPath(accountKind, accountId));
  }
}
