import { Module } from '@nestjs/common';
import { DASHBOARD_ACCESS } from '../common/auth-context/dashboard-access';
import { EventsModule } from '../events/events.module';
import { IdentityModule } from '../identity/identity.module';
import { OrdersModule } from '../orders/orders.module';
import { PortalModule } from '../portal/portal.module';
import { VenuesModule } from '../venues/venues.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DashboardAccountViews } from './dashboard-account-views.service';
import { DashboardAccountsController } from './dashboard-accounts.controller';
import { DashboardAssetsController } from './dashboard-assets.controller';
import { DashboardEventsController } from './dashboard-events.controller';
import { DashboardInstancesController } from './dashboard-instances.controller';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardKeysController } from './dashboard-keys.controller';
import { DashboardPages } from './dashboard-pages';
import { DashboardPortalLinksController } from './dashboard-portal-links.controller';
import { DashboardSessionRepository } from './dashboard-session.repository';
import { DashboardSessionsService } from './dashboard-sessions.service';
import { DashboardSignInController } from './dashboard-sign-in.controller';
import { DashboardWebhooksController } from './dashboard-webhooks.controller';

/**
 * The dashboard: server-rendered pages on the admin listener, over the same
 * domain services as the internal API. It provides `DASHBOARD_ACCESS`, which
 * the admin-token guard asks about every `@DashboardRoute()` request.
 */
@Module({
  imports: [IdentityModule, VenuesModule, EventsModule, OrdersModule, WebhooksModule, PortalModule],
  controllers: [
    DashboardSignInController,
    DashboardAssetsController,
    DashboardAccountsController,
    DashboardKeysController,
    DashboardEventsController,
    DashboardWebhooksController,
    DashboardPortalLinksController,
    DashboardInstancesController,
  ],
  providers: [
    DashboardSessionsService,
    DashboardSessionRepository,
    { provide: DASHBOARD_ACCESS, useExisting: DashboardSessionsService },
    DashboardPages,
    DashboardHtmlFilter,
    DashboardAccountViews,
  ],
  // The admin-token guard (an app-wide guard) asks this provider about dashboard routes.
  exports: [DASHBOARD_ACCESS],
})
export class DashboardModule {}
