import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { AdminTokenGuard } from './common/auth-context/admin-token.guard';
import { ApiKeyGuard } from './common/auth-context/api-key.guard';
import { PortalSessionGuard } from './common/auth-context/portal-session.guard';
import { ScopeGuard } from './common/auth-context/scope.guard';
import { DomainEventsModule } from './common/domain-events/domain-events.module';
import { ApiExceptionFilter } from './common/errors/api-exception.filter';
import { HtmlSections } from './common/html/html-sections';
import { HttpModule } from './common/http/http.module';
import { OpenApiModule } from './common/openapi/openapi.module';
import { RouteTable } from './common/http/route-table';
import { PaginationModule } from './common/pagination/pagination.module';
import { QueryParametersGuard } from './common/query/query-parameters.guard';
import { AccountRateLimitGuard } from './common/rate-limit/account-rate-limit.guard';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { DatabaseModule } from './database/database.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { IdentityModule } from './identity/identity.module';
import { MetricsModule } from './metrics/metrics.module';
import { OrdersModule } from './orders/orders.module';
import { PortalModule } from './portal/portal.module';
import { VenuesModule } from './venues/venues.module';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class AppModule {
  /** `sections` is given by the bootstrap when the router's own errors must find it too; the CLI's context needs none. */
  static forRoot(config: AppConfig, routes: RouteTable, sections = new HtmlSections()): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        DomainEventsModule,
        PaginationModule,
        RateLimitModule,
        ScheduleModule.forRoot(),
        HttpModule.forRoot(routes, sections),
        IdentityModule,
        VenuesModule,
        EventsModule,
        OrdersModule,
        WebhooksModule,
        OpenApiModule,
        DashboardModule,
        PortalModule,
        HealthModule,
        MetricsModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        // No interceptors: the envelope is applied by EnvelopingFastifyAdapter (bootstrap.ts).
        // No global pipe: bodies take theirs from @ValidatedBody(), and start-up refuses a bare @Body().
        // Guards run in this order. Each route's audience (src/common/http/listener.ts) says which apply;
        // the caller was already authenticated before the body was read (request-authentication.ts).
        // 1. the admin token (or a dashboard session), for internal routes on the internal listener;
        { provide: APP_GUARD, useClass: AdminTokenGuard },
        // 2. an API key's principal, required on every public API route;
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        // 3. a portal session (its own account only), required on every /portal route but the link's entry page;
        { provide: APP_GUARD, useClass: PortalSessionGuard },
        // 4. the account's rate budget (API keys and portal sessions alike), before scopes so that refused
        //    (403) requests cost the account too; an API key's request was counted already, before its body
        //    was read (installAccountBudgetBeforeBody, which bootstrap.ts installs with this same instance);
        AccountRateLimitGuard,
        { provide: APP_GUARD, useExisting: AccountRateLimitGuard },
        // 5. scope and principal type, read from @RequireAccess; a route without it is refused;
        { provide: APP_GUARD, useClass: ScopeGuard },
        // 6. unknown query parameters, counted against the budget like any request.
        { provide: APP_GUARD, useClass: QueryParametersGuard },
      ],
    };
  }
}
