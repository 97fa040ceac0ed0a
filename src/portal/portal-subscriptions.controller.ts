import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PortalRoute } from '../common/auth-context/portal-access';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { seeOther } from '../common/html/html-answers';
import { HtmlForm } from '../common/html/html-form';
import { webhookName } from '../common/html/html-format';
import {
  pageAfterAction,
  readRecoverWindowForm,
  readRotateSecretForm,
  recoveredMessage,
} from '../webhooks/webhook-operation-inputs';
import type { WebhookDetailResponseDto } from '../webhooks/dto/webhook.dto';
import { WebhookOperationsService } from '../webhooks/webhook-operations.service';
import type { PortalAccount, PortalSessionRow } from './portal-access.repository';
import { PortalHtmlFilter } from './portal-html.filter';
import { PortalPages } from './portal-pages';
import { portalPath } from './portal-paths';
import { PortalRedirect } from './portal-redirect';
import { requirePortalSession } from './portal-request';
import { PortalSessionsService } from './portal-sessions.service';
import { PortalSubscriptionViews } from './portal-subscription-views.service';

function accountOf(session: PortalSessionRow): PortalAccount {
  return { type: session.account_type, id: session.account_id };
}

/** A resend posted from a page that showed the subscription enabled, reaching it disabled: in the page's words. */
const RESEND_TO_DISABLED =
  'This subscription was disabled after the page was shown: nothing was sent. Its page now offers “Resend anyway”, or re-enable it first.';

/** A recovery window posted to a subscription disabled since its page was shown. */
const RECOVER_WHILE_DISABLED =
  'This subscription was disabled after the page was shown: nothing was queued. Re-enable it, with “Also send what it missed while disabled” ticked, then recover a window.';

/**
 * The portal's pages for a signed-in account: its subscriptions, each one's
 * delivery log, the operations on it (unless the link was read-only), and
 * the page for receivers' developers. Every action answers with a redirect
 * (Post/Redirect/Get), so a reload shows the page and never repeats it.
 */
@ApiExcludeController()
@UseFilters(PortalHtmlFilter)
@PortalRoute('session')
@Controller('portal')
export class PortalSubscriptionsController {
  constructor(
    private readonly views: PortalSubscriptionViews,
    private readonly operations: WebhookOperationsService,
    private readonly sessions: PortalSessionsService,
    private readonly pages: PortalPages,
  ) {}

  @Get('subscriptions')
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const account = accountOf(requirePortalSession(request));
    const [subscriptions, accountName] = await Promise.all([this.views.list(account), this.views.accountName(account)]);
    return this.pages.send(request, reply, 'subscriptions', {
      title: 'Webhook subscriptions',
      subscriptions,
      accountName,
      accountType: account.type,
    });
  }

  @Get('verify')
  async verify(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const subscriptions = await this.views.list(accountOf(requirePortalSession(request)));
    return this.pages.send(request, reply, 'verify', {
      title: 'Verifying deliveries',
      subscriptions,
      exampleId: subscriptions[0]?.id ?? 'wh_…',
    });
  }

  @Get('subscriptions/:webhookId')
  @AcceptsQuery('before')
  async subscription(
    @Param('webhookId') webhookId: string,
    @Query('before') before: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const olderThan = typeof before === 'string' && before !== '' ? before : undefined;
    // "Refresh the log" asks with htmx and swaps parts of the page in place, which a screen reader does not notice by
    // itself: that answer says in its polite status what was refreshed. A page that loads says nothing there.
    const refreshedAt = request.headers['hx-request'] === 'true' ? new Date() : null;
    const account = accountOf(requirePortalSession(request));
    const view = await this.views.subscriptionPage(account, webhookId, olderThan, refreshedAt);
    return this.pages.send(request, reply, 'subscription', view);
  }

  @Post('subscriptions/:webhookId/deliveries/:deliveryId/resend')
  async resend(
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const form = new HtmlForm(request);
    const force = form.checked('force');
    const webhook = await this.actionable(request, webhookId);
    await this.report(request, async () => {
      // The page offered "Resend" while the subscription was enabled: disabled since, it is said in the page's words.
      if (!webhook.enabled && !force) throw DomainError.conflict(RESEND_TO_DISABLED);
      await this.operations.resend(webhookId, deliveryId, { force });
      return `Delivery ${deliveryId} is being sent again.`;
    });
    throw new PortalRedirect(await this.pageOf(webhookId, form));
  }

  @Post('subscriptions/:webhookId/recover')
  async recover(
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const form = new HtmlForm(request);
    const sinceText = form.text('since');
    const untilText = form.text('until');
    // Whose subscription it is and whether the link may act come before the fields: those refusals are not the
    // typist's to correct.
    const webhook = await this.actionable(request, webhookId);
    let recoverWindow: { since: Date; until?: Date } | null = null;
    // The form is on the page only while the subscription is enabled: a disabled one's refusal is said at the top.
    if (webhook.enabled) {
      const read = readRecoverWindowForm(sinceText, untilText);
      if (read.refused !== undefined) {
        return this.showRefused(request, reply, webhookId, form, read.refused, {
          sinceValue: sinceText,
          untilValue: untilText,
        });
      }
      recoverWindow = read.window;
    }
    await this.report(request, async () => {
      // Disabled since the page was shown (its form is not on a disabled one's page): said before any field is read.
      if (recoverWindow === null) throw DomainError.conflict(RECOVER_WHILE_DISABLED);
      return recoveredMessage(await this.operations.recover(webhookId, recoverWindow));
    });
    throw new PortalRedirect(await this.pageOf(webhookId, form));
  }

  @Post('subscriptions/:webhookId/enable')
  async enable(@Param('webhookId') webhookId: string, @Req() request: FastifyRequest): Promise<never> {
    const form = new HtmlForm(request);
    const recover = form.checked('recover');
    await this.act(request, webhookId, async () => {
      await this.operations.enable(webhookId, { recover });
      return recover ? 'Re-enabled; what it missed while disabled is being sent.' : 'Re-enabled.';
    });
    throw new PortalRedirect(await this.pageOf(webhookId, form));
  }

  /** The new secret is not carried through the redirect: the next page may show the current secret, once. */
  @Post('subscriptions/:webhookId/rotate-secret')
  async rotateSecret(
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const session = requirePortalSession(request);
    const form = new HtmlForm(request);
    const graceText = form.text('graceSeconds');
    // Whose subscription it is and whether the link may act come before the fields, as for a recovery window.
    const webhook = await this.actionable(request, webhookId);
    const read = readRotateSecretForm(
      graceText,
      form.checked('confirmNoGrace'),
      webhook.secretRotation?.previousExpiresAt ?? null,
    );
    // The typist's to correct: shown again with what was typed, beside the seconds or the box, never turned into
    // the default (a 0 meant to stop a leaked secret must not come back as a day's grace).
    if (read.refused !== undefined) {
      return this.showRefused(request, reply, webhookId, form, read.refused, { graceValue: graceText });
    }
    // Unless the box was ticked, the rotation itself refuses while an earlier grace runs (said on the page): another
    // form posted at the same moment may have begun one since the subscription was read above.
    const keepEarlierGrace = !form.checked('confirmNoGrace');
    let rotated = false;
    await this.report(request, async () => {
      await this.operations.rotateSecret(webhookId, { graceSeconds: read.graceSeconds, keepEarlierGrace });
      await this.sessions.allowSecretReveal(session, webhookId);
      rotated = true;
      return 'Secret rotated.';
    });
    throw new PortalRedirect(
      rotated ? portalPath('subscriptions', webhookId, 'secret') : await this.pageOf(webhookId, form),
    );
  }

  @Get('subscriptions/:webhookId/secret')
  async secret(
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const session = requirePortalSession(request);
    const webhook = await this.views.owned(accountOf(session), webhookId);
    if (!(await this.sessions.takeSecretReveal(request, session, webhookId))) {
      await this.sessions.flash(request, {
        kind: 'error',
        text: 'The new secret was shown once and is not shown again. Rotate again if it was not copied.',
      });
      throw new PortalRedirect(portalPath('subscriptions', webhookId));
    }
    return this.pages.send(request, reply, 'secret', {
      title: 'New signing secret',
      // The focus goes to the secret shown once, not to the message above it.
      ownFocus: true,
      webhook,
      webhookHref: portalPath('subscriptions', webhookId),
      breadcrumbs: [
        { label: 'Subscriptions', href: portalPath('subscriptions') },
        { label: webhookName(webhook), href: portalPath('subscriptions', webhookId) },
      ],
    });
  }

  /** Lands on the signed-out page also when the session had already ended (a tab left open, a second click). */
  @Post('sign-out')
  @PortalRoute('optional')
  async signOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    await this.sessions.signOut(request, reply);
    seeOther(request, reply, portalPath('signed-out'));
    return reply;
  }

  /** The page of the subscription's log the form was posted from (its `before`), where the result shows. */
  private pageOf(webhookId: string, form: HtmlForm): Promise<string> {
    return pageAfterAction(this.operations, webhookId, portalPath('subscriptions', webhookId), form.text('before'));
  }

  /** A form refused for what was typed: its page shown again with the 4xx, the refusal beside its field, what was typed kept. */
  private async showRefused(
    request: FastifyRequest,
    reply: FastifyReply,
    webhookId: string,
    form: HtmlForm,
    refused: { field: string; error: DomainError },
    typed: Record<string, string | null>,
  ): Promise<FastifyReply> {
    const view = await this.viewOfPostedPage(request, webhookId, form);
    return this.pages.send(
      request,
      reply,
      'subscription',
      { ...view, [`${refused.field}Error`]: refused.error.message, ...typed },
      refused.error.status,
    );
  }

  /**
   * The page a refused form is shown again on: the page of the log it was posted from, while the log still accepts
   * its cursor (as pageOf), else the newest.
   */
  private async viewOfPostedPage(
    request: FastifyRequest,
    webhookId: string,
    form: HtmlForm,
  ): Promise<Record<string, unknown>> {
    const account = accountOf(requirePortalSession(request));
    const before = form.text('before');
    if (before !== null) {
      try {
        return await this.views.subscriptionPage(account, webhookId, before);
      } catch (error) {
        if (!(error instanceof DomainError) || error.status >= 500) throw error;
      }
    }
    return this.views.subscriptionPage(account, webhookId);
  }

  /**
   * Runs an operation on one of the account's subscriptions and reports its
   * outcome on the next page. Scope first: another account's subscription is
   * not found before anything is done; a read-only link changes nothing.
   */
  private async act(request: FastifyRequest, webhookId: string, operation: () => Promise<string>): Promise<void> {
    await this.actionable(request, webhookId);
    await this.report(request, operation);
  }

  /** The subscription, if it is the session's account's (else 404) and the link may act on it (else 403). */
  private async actionable(request: FastifyRequest, webhookId: string): Promise<WebhookDetailResponseDto> {
    const session = requirePortalSession(request);
    const webhook = await this.views.owned(accountOf(session), webhookId);
    if (session.read_only) {
      throw new DomainError(
        ErrorCode.Forbidden,
        'This portal link is read-only: it shows everything and changes nothing.',
      );
    }
    return webhook;
  }

  /** Leaves the outcome of an operation for the next page; a refusal is said there, never a dead end. */
  private async report(request: FastifyRequest, operation: () => Promise<string>): Promise<void> {
    try {
      await this.sessions.flash(request, { kind: 'success', text: await operation() });
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      await this.sessions.flash(request, { kind: 'error', text: error.message });
    }
  }
}
