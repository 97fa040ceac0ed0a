import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import {
  deliveryLogPage,
  pageAfterAction,
  readRecoverWindowForm,
  readRotateSecretForm,
  recoveredMessage,
} from '../webhooks/webhook-operation-inputs';
import { DEFAULT_GRACE_SECONDS, WebhookOperationsService } from '../webhooks/webhook-operations.service';
import { healthOf } from '../webhooks/dto/webhook-health';
import { DashboardAccountViews } from './dashboard-account-views.service';
import { HtmlForm } from '../common/html/html-form';
import { logRefreshed, webhookName } from '../common/html/html-format';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { dashboardPath } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { DashboardSessionsService } from './dashboard-sessions.service';

/** The page shows the newest deliveries of the log; the internal API's list has the rest. */
const DELIVERIES_SHOWN = 100;

/** The page a rotation redirects to; the new secret waits for it in the session, never in the URL. */
function newSecretPath(webhookId: string): string {
  return dashboardPath('webhooks', webhookId, 'new-secret');
}

/**
 * One webhook subscription: health, warnings, the delivery log with every
 * attempt, and the operations (re-enable with recovery, resend, recover a
 * window, rotate the secret) of WebhookOperationsService.
 */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('session')
@Controller('internal/dashboard/webhooks/:webhookId')
export class DashboardWebhooksController {
  constructor(
    private readonly operations: WebhookOperationsService,
    private readonly accounts: DashboardAccountViews,
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
  ) {}

  @Get()
  @AcceptsQuery('before')
  async page(
    @Param('webhookId') webhookId: string,
    @Query('before') before: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const olderThan = typeof before === 'string' && before !== '' ? before : undefined;
    // "Refresh the log" asks with htmx and swaps parts of the page in place, which a screen reader does not notice by
    // itself: that answer says in its polite status what was refreshed. A page that loads says nothing there.
    const refreshedAt = request.headers['hx-request'] === 'true' ? new Date() : null;
    return this.pages.send(request, reply, 'webhook', await this.view(webhookId, olderThan, refreshedAt));
  }

  @Post('enable')
  async enable(@Param('webhookId') webhookId: string, @Req() request: FastifyRequest): Promise<never> {
    const form = new HtmlForm(request);
    const recover = form.checked('recover');
    await this.attempt(request, async () => {
      await this.operations.enable(webhookId, { recover });
      return recover ? 'Re-enabled; what it missed while disabled is queued again.' : 'Re-enabled.';
    });
    throw new DashboardRedirect(await this.pageOf(webhookId, form));
  }

  @Post('deliveries/:deliveryId/resend')
  async resend(
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const form = new HtmlForm(request);
    const force = form.checked('force');
    await this.attempt(request, async () => {
      await this.operations.resend(webhookId, deliveryId, { force });
      return `Delivery ${deliveryId} is being sent again.`;
    });
    throw new DashboardRedirect(await this.pageOf(webhookId, form));
  }

  @Post('recover')
  async recover(
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const form = new HtmlForm(request);
    const sinceText = form.text('since');
    const untilText = form.text('until');
    // A window the form cannot read is the typist's to correct: shown again beside the field, with what was typed.
    const read = readRecoverWindowForm(sinceText, untilText);
    if (read.refused !== undefined) {
      const { field, error } = read.refused;
      const view = await this.viewOfPostedPage(webhookId, form);
      return this.pages.send(
        request,
        reply,
        'webhook',
        { ...view, [`${field}Error`]: error.message, sinceValue: sinceText, untilValue: untilText },
        error.status,
      );
    }
    const recoverWindow = read.window;
    // What the service refuses (a subscription disabled meanwhile) is about the webhook, not a field: said on the page.
    await this.attempt(request, async () => recoveredMessage(await this.operations.recover(webhookId, recoverWindow)));
    throw new DashboardRedirect(await this.pageOf(webhookId, form));
  }

  @Post('rotate-secret')
  async rotateSecret(
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const form = new HtmlForm(request);
    const graceText = form.text('graceSeconds');
    const { secretRotation } = await this.operations.detail(webhookId);
    const read = readRotateSecretForm(
      graceText,
      form.checked('confirmNoGrace'),
      secretRotation?.previousExpiresAt ?? null,
    );
    // Shown again beside the seconds or the box that would have confirmed them, with what was typed.
    const showRefused = async (field: 'grace' | 'confirm', error: DomainError): Promise<FastifyReply> => {
      const view = await this.viewOfPostedPage(webhookId, form);
      const page = { ...view, [`${field}Error`]: error.message, graceValue: graceText };
      return this.pages.send(request, reply, 'webhook', page, error.status);
    };
    if (read.refused !== undefined) return showRefused(read.refused.field, read.refused.error);
    // Unless the box was ticked, the rotation itself refuses while an earlier grace runs: another form posted at
    // the same moment may have begun one since the webhook was read above.
    const keepEarlierGrace = !form.checked('confirmNoGrace');
    const rotated = await this.operations
      .rotateSecret(webhookId, { graceSeconds: read.graceSeconds, keepEarlierGrace })
      .catch((error: unknown) => {
        if (error instanceof DomainError && error.status === 400) return error;
        throw error;
      });
    if (rotated instanceof DomainError) return showRefused('confirm', rotated);
    this.sessions.putFlash(request, newSecretPath(webhookId), rotated.secret);
    throw new DashboardRedirect(newSecretPath(webhookId));
  }

  /**
   * The new secret, on the first GET after the rotation only; a reload says
   * it was shown once instead (and rotates nothing). A HEAD request shows
   * nothing, so it leaves the secret for the GET.
   */
  @Get('new-secret')
  async newSecret(
    @Param('webhookId') webhookId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const webhook = await this.operations.detail(webhookId);
    const secret = request.method === 'GET' ? this.sessions.takeFlash(request, newSecretPath(webhookId)) : null;
    return this.pages.send(request, reply, 'secret-rotated', {
      title: secret === null ? 'Signing secret' : 'Secret rotated',
      // The focus goes to the secret shown once, not to a message above it.
      ownFocus: secret !== null,
      secret,
      secretRotation: webhook.secretRotation,
      webhookHref: dashboardPath('webhooks', webhookId),
      breadcrumbs: [{ label: 'Webhook', href: dashboardPath('webhooks', webhookId) }],
    });
  }

  /** The page of the webhook's log the form was posted from (its `before`), where the result shows. */
  private pageOf(webhookId: string, form: HtmlForm): Promise<string> {
    return pageAfterAction(this.operations, webhookId, dashboardPath('webhooks', webhookId), form.text('before'));
  }

  /**
   * The page a refused form is shown again on: the page of the log it was posted from, while the log still accepts
   * its cursor (as pageOf), else the newest.
   */
  private async viewOfPostedPage(webhookId: string, form: HtmlForm): Promise<Record<string, unknown>> {
    const before = form.text('before');
    if (before !== null) {
      try {
        return await this.view(webhookId, before);
      } catch (error) {
        if (!(error instanceof DomainError) || error.status >= 500) throw error;
      }
    }
    return this.view(webhookId);
  }

  /** Runs an operation and reports its outcome on the next page; a refusal is shown, never a dead end. */
  private async attempt(request: FastifyRequest, operation: () => Promise<string>): Promise<void> {
    try {
      this.sessions.flash(request, { kind: 'success', text: await operation() });
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      this.sessions.flash(request, { kind: 'error', text: error.message });
    }
  }

  /**
   * The webhook with a page of its delivery log: the newest, or those before `olderThanId` (one of its deliveries);
   * with `refreshedAt`, what its status region announces for a refresh in place.
   */
  private async view(
    webhookId: string,
    olderThanId?: string,
    refreshedAt: Date | null = null,
  ): Promise<Record<string, unknown>> {
    const [webhook, page] = await Promise.all([
      this.operations.detail(webhookId),
      deliveryLogPage(this.operations, webhookId, olderThanId, DELIVERIES_SHOWN),
    ]);
    const account = await this.accounts.account(webhook.accountType, webhook.accountId);
    const health = healthOf(webhook);
    return {
      olderPage: olderThanId !== undefined,
      // Carried by the page's forms, so an action returns to this page of the log.
      before: olderThanId ?? null,
      olderHref:
        page.nextCursor === null
          ? null
          : `${dashboardPath('webhooks', webhookId)}?before=${encodeURIComponent(page.nextCursor)}#delivery-log`,
      // An account's subscriptions often share a host: the description (or the id) tells their tabs apart.
      title: webhookName(webhook),
      webhook: { ...webhook, health },
      logStatus: refreshedAt === null ? null : logRefreshed(refreshedAt, page.items.length, health),
      figures: webhook.health,
      account,
      deliveries: page.items,
      moreDeliveries: page.hasMore,
      webhookHref: dashboardPath('webhooks', webhookId),
      defaultGrace: DEFAULT_GRACE_SECONDS,
      graceError: null,
      confirmError: null,
      graceValue: null,
      sinceError: null,
      untilError: null,
      sinceValue: null,
      untilValue: null,
      breadcrumbs: [
        { label: 'Accounts', href: dashboardPath('accounts') },
        { label: account.name, href: account.href },
      ],
    };
  }
}
