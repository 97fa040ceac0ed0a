import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error';
import { logRefreshed, webhookName } from '../common/html/html-format';
import { healthOf } from '../webhooks/dto/webhook-health';
import { OrganisersService } from '../identity/organisers.service';
import { VenuesService } from '../venues/venues.service';
import type { WebhookDetailResponseDto } from '../webhooks/dto/webhook.dto';
import { deliveryLogPage } from '../webhooks/webhook-operation-inputs';
import { DEFAULT_GRACE_SECONDS, WebhookOperationsService } from '../webhooks/webhook-operations.service';
import { WebhooksService } from '../webhooks/webhooks.service';
import type { PortalAccount } from './portal-access.repository';
import { deliveryView } from './portal-delivery-view';
import { portalPath } from './portal-paths';

export interface PortalSubscriptionSummary {
  id: string;
  /** What names it on the pages: its host and description (or id), so two to one host can be told apart. */
  name: string;
  url: string;
  /** The account's own label for it (a field of the public API), or null. */
  description: string | null;
  events: string[];
  health: string;
  consecutiveFailures: number;
  figures: WebhookDetailResponseDto['health'];
  warnings: WebhookDetailResponseDto['warnings'];
  href: string;
}

/** The page shows the newest deliveries of the log (with every attempt of each). */
export const DELIVERIES_SHOWN = 100;

/**
 * What the portal's pages show, always through the account: a subscription
 * of another account is not found, exactly as one that does not exist
 * (same error, same page), and is checked before any operation touches it.
 */
@Injectable()
export class PortalSubscriptionViews {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly operations: WebhookOperationsService,
    private readonly organisers: OrganisersService,
    private readonly venues: VenuesService,
  ) {}

  /** The subscription, if it is the account's; otherwise 404 as for an unknown id. */
  async owned(account: PortalAccount, webhookId: string): Promise<WebhookDetailResponseDto> {
    let detail: WebhookDetailResponseDto;
    try {
      detail = await this.operations.detail(webhookId);
    } catch (error) {
      if (error instanceof DomainError && error.status === 404) throw DomainError.notFound('Webhook');
      throw error;
    }
    if (detail.accountType !== account.type || detail.accountId !== account.id) throw DomainError.notFound('Webhook');
    return detail;
  }

  async accountName(account: PortalAccount): Promise<string> {
    if (account.type === 'organiser') return (await this.organisers.find(account.id))?.name ?? account.id;
    return (await this.venues.describe(account.id)).name ?? account.id;
  }

  /** Every subscription of the account (ten at most), each with its health figures and warnings. */
  async list(account: PortalAccount): Promise<PortalSubscriptionSummary[]> {
    const subscriptions = await this.webhooks.list(account);
    const details = await Promise.all(subscriptions.map((webhook) => this.operations.detail(webhook.id)));
    return details.map((detail) => ({
      id: detail.id,
      name: webhookName(detail),
      url: detail.url,
      description: detail.description,
      events: detail.events,
      health: healthOf(detail),
      consecutiveFailures: detail.consecutiveFailures,
      figures: detail.health,
      warnings: detail.warnings,
      href: portalPath('subscriptions', detail.id),
    }));
  }

  /**
   * The subscription with a page of its delivery log: the newest, or those before `olderThanId` (one of its
   * deliveries); with `refreshedAt`, what its status region announces for a refresh in place.
   */
  async subscriptionPage(
    account: PortalAccount,
    webhookId: string,
    olderThanId?: string,
    refreshedAt: Date | null = null,
  ): Promise<Record<string, unknown>> {
    const webhook = await this.owned(account, webhookId);
    const page = await deliveryLogPage(this.operations, webhookId, olderThanId, DELIVERIES_SHOWN);
    const shown = page.items.map(deliveryView);
    const health = healthOf(webhook);
    return {
      olderPage: olderThanId !== undefined,
      // Carried by the page's forms, so an action returns to this page of the log.
      before: olderThanId ?? null,
      olderHref:
        page.nextCursor === null
          ? null
          : `${portalPath('subscriptions', webhookId)}?before=${encodeURIComponent(page.nextCursor)}#delivery-log`,
      title: webhookName(webhook),
      webhook: { ...webhook, secret: undefined, health },
      logStatus: refreshedAt === null ? null : logRefreshed(refreshedAt, shown.length, health),
      figures: webhook.health,
      deliveries: shown,
      moreDeliveries: page.hasMore,
      missed: shown.filter((delivery) => delivery.status === 'skipped'),
      webhookHref: portalPath('subscriptions', webhookId),
      defaultGrace: DEFAULT_GRACE_SECONDS,
      // A refused rotation or recovery window is shown again with these set (the controller's rotateSecret, recover).
      graceError: null,
      confirmError: null,
      graceValue: null,
      sinceError: null,
      untilError: null,
      sinceValue: null,
      untilValue: null,
      breadcrumbs: [{ label: 'Subscriptions', href: portalPath('subscriptions') }],
    };
  }
}
