import { Controller, Get, Inject, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { TopLevelBody } from '../common/envelope/page';
import { EXAMPLES } from '../common/openapi/openapi-examples';
import { PublicOperation } from '../common/openapi/public-operation.decorator';
import { PAGING_PARAMETERS } from '../common/query/accepts-query.decorator';
import { RouteCatalogue } from '../common/http/route-catalogue';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../common/pagination/page-request';
import { WRITE_METHODS } from '../common/rate-limit/account-rate-limit.guard';
import { ApiRootDto, MeResponseDto } from './dto/identity.dto';

const EVERY_PRINCIPAL = { principals: ['organiser', 'venue', 'professional'] } as const;

/** Webhook event types each principal type may subscribe to. */
const EVENTS_AVAILABLE = {
  organiser: ['order.confirmed', 'event.published'],
  venue: ['event.published'],
  professional: [],
} as const;

@ApiTags('Identity')
@ApiBearerAuth()
@Controller('v1')
export class IdentityController {
  constructor(
    private readonly catalogue: RouteCatalogue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @RequireAccess({ principals: [...EVERY_PRINCIPAL.principals] })
  @PublicOperation({
    operationId: 'describeApi',
    summary: 'Describe the API as this key sees it',
    description:
      'Any valid key. The members sit at the top level, as the contract says, and the same object under `data`, so the "every success body has `data`" rule holds too.',
    success: { status: 200, description: 'The description.', body: { model: ApiRootDto }, example: EXAMPLES.apiRoot },
  })
  root(@Auth() auth: AuthContext, @Req() request: FastifyRequest): TopLevelBody<Record<string, unknown>> {
    const window = this.config.rateLimit.windowSeconds;
    const endpoints: Record<string, string> = {};
    for (const route of this.catalogue.publicRoutes()) {
      const scope = route.access?.scope ?? 'none (any valid key)';
      endpoints[`${route.method} ${route.path}`] =
        `scope: ${scope}; principals: ${(route.access?.principals ?? []).join(', ')}`;
    }
    const body = {
      api: 'events-orders-webhooks',
      version: 'v1',
      // The contract types this member as a string; non-organiser keys get ''. GET /v1/me tells the principal.
      organizerId: auth.principal.type === 'organiser' ? auth.principal.id : '',
      scopes: auth.scopes,
      endpoints,
      events_available: [...EVENTS_AVAILABLE[auth.principal.type]],
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
      rateLimits: {
        reads: `${this.config.rateLimit.reads} per ${window} seconds (GET, HEAD)`,
        writes: `${this.config.rateLimit.writes} per ${window} seconds (${WRITE_METHODS.filter((m) => m !== 'PUT').join(', ')})`,
        writeMethods: WRITE_METHODS.filter((method) => method !== 'PUT'),
        headers: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
        scope: `Per account: every key of the ${auth.principal.type} account draws on one budget; extra keys add nothing. Fixed ${window}-second windows.`,
      },
      requestId: String(request.id),
      docs: `${this.config.publicWebUrl}/docs`,
    };
    // Every success body carries `data` (General conventions); GET /v1 also
    // has its members at the top level, so both readings hold.
    return new TopLevelBody({ ...body, data: body });
  }

  @Get('me')
  @RequireAccess({ principals: [...EVERY_PRINCIPAL.principals] })
  @PublicOperation({
    operationId: 'getMe',
    summary: 'The principal and scopes of the calling key',
    description: 'Any valid key.',
    success: { status: 200, description: 'The calling key.', body: { data: MeResponseDto }, example: EXAMPLES.me },
  })
  me(@Auth() auth: AuthContext): MeResponseDto {
    return {
      principal: auth.principal,
      organizerId: auth.principal.type === 'organiser' ? auth.principal.id : null,
      scopes: auth.scopes,
      apiVersion: 'v1',
      keyPrefix: auth.keyPrefix,
    };
  }
}
