import { Module } from '@nestjs/common';
import { PORTAL_ACCESS } from '../common/auth-context/portal-access';
import { IdentityModule } from '../identity/identity.module';
import { VenuesModule } from '../venues/venues.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { PortalAccessRepository } from './portal-access.repository';
import { PortalEntryController } from './portal-entry.controller';
import { PortalHtmlFilter } from './portal-html.filter';
import { PortalLinksInternalController } from './portal-links.internal.controller';
import { PortalLinksService } from './portal-links.service';
import { PortalPages } from './portal-pages';
import { PortalSessionsService } from './portal-sessions.service';
import { PortalSubscriptionViews } from './portal-subscription-views.service';
import { PortalSubscriptionsController } from './portal-subscriptions.controller';

/**
 * The webhook portal: server-rendered pages under `/portal` on the public
 * listener, where an organiser or a venue sees and operates its own webhook
 * subscriptions with a session opened from a one-time link. It provides
 * `PORTAL_ACCESS`, which the portal-session guard asks about every portal route.
 */
@Module({
  imports: [IdentityModule, VenuesModule, WebhooksModule],
  controllers: [PortalEntryController, PortalSubscriptionsController, PortalLinksInternalController],
  providers: [
    PortalAccessRepository,
    PortalLinksService,
    PortalSessionsService,
    { provide: PORTAL_ACCESS, useExisting: PortalSessionsService },
    PortalPages,
    PortalHtmlFilter,
    PortalSubscriptionViews,
  ],
  // The portal-session guard (app-wide) asks PORTAL_ACCESS; the dashboard and the CLI mint links.
  exports: [PORTAL_ACCESS, PortalLinksService],
})
export class PortalModule {}
