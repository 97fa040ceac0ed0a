import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../common/auth-context/access';
import { RouteCatalogue } from '../common/http/route-catalogue';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../common/pagination/page-request';
import { PAGING_PARAMETERS } from '../common/query/accepts-query.decorator';
import { WRITE_METHODS } from '../common/rate-limit/account-rate-limit.guard';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EVENT_TYPES_FOR_PRINCIPAL } from '../../libs/webhooks/event-types';

const CONTRACT_WRITE_METHODS = WRITE_METHODS.filter((method) => method !== 'PUT');

/**
 * `GET /v1`: the API as one key sees it. Every part is read from where the
 * rule lives (the controllers' access metadata, the paging rules, the rate
 * budget, the webhook types a principal may subscribe to), never restated.
 */
@Injectable()
export class ApiOverviewPresenter {
  constructor(
    private readonly catalogue: RouteCatalogue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  present(auth: AuthContext, requestId: string): Record<string, unknown> {
    return {
      api: 'events-orders-webhooks',
      version: 'v1',
      // The contract types this member as a string; non-organiser keys get ''. GET /v1/me tells the principal.
      organizerId: auth.principal.type === 'organiser' ? auth.principal.id : '',
      scopes: auth.scopes,
      endpoints: this.endpoints(),
      events_available: [...EVENT_TYPES_FOR_PRINCIPAL[auth.principal.type]],
      auth: 'Authorization: Bearer <API_KEY>; keys are svc_live_ followed by 48 hex characters.',
      pagination: {
        style: 'cursor',
        parameters: [...PAGING_PARAMETERS],
        maxLimit: MAX_LIMIT,
        defaultLimit: DEFAULT_LIMIT,
        envelope: ['data', 'has_more', 'next_cursor'],
      },
      filters: {
        updated_after:
          'ISO 8601 timestamp or epoch milliseconds: only rows whose updatedAt is at or after it, ordered by updatedAt ascending.',
      },
      rateLimits: this.rateLimits(auth),
      requestId,
      docs: `${this.config.publicWebUrl}/docs`,
    };
  }

  /** `"METHOD /path"` → the scope and principal types it requires. */
  private endpoints(): Record<string, string> {
    const endpoints: Record<string, string> = {};
    for (const route of this.catalogue.publicRoutes()) {
      const scope = route.access?.scope ?? 'none (any valid key)';
      endpoints[`${route.method} ${route.path}`] =
        `scope: ${scope}; principals: ${(route.access?.principals ?? []).join(', ')}`;
    }
    return endpoints;
  }

  private rateLimits(auth: AuthContext): Record<string, unknown> {
    const { reads, writes, windowSeconds: window } = this.config.rateLimit;
    return {
      reads: `${reads} per ${window} seconds (GET, HEAD)`,
      writes: `${writes} per ${window} seconds (${CONTRACT_WRITE_METHODS.join(', ')})`,
      writeMethods: CONTRACT_WRITE_METHODS,
      headers: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
      scope: `Per account: every key of the ${auth.principal.type} account draws on one budget; extra keys add nothing. Fixed ${window}-second windows.`,
    };
  }
}
