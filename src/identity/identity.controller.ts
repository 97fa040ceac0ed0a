import { Controller, Get, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { TopLevelBody } from '../common/envelope/page';
import { EXAMPLES } from '../common/openapi/openapi-examples';
import { PublicOperation } from '../common/openapi/public-operation.decorator';
import { ApiOverviewPresenter } from './api-overview.presenter';
import { ApiRootDto, MeResponseDto } from './dto/identity.dto';

const EVERY_PRINCIPAL = { principals: ['organiser', 'venue', 'professional'] } as const;

@ApiTags('Identity')
@Controller('v1')
export class IdentityController {
  constructor(private readonly overview: ApiOverviewPresenter) {}

  @Get()
  @RequireAccess({ principals: [...EVERY_PRINCIPAL.principals] })
  @PublicOperation({
    operationId: 'describeApi',
    summary: 'Describe the API as this key sees it',
    description:
      'The members sit at the top level, as the contract says, and the same object under `data`, so the "every success body has `data`" rule holds too.',
    success: { status: 200, description: 'The description.', body: { model: ApiRootDto }, example: EXAMPLES.apiRoot },
  })
  root(@Auth() auth: AuthContext, @Req() request: FastifyRequest): TopLevelBody<Record<string, unknown>> {
    const body = this.overview.present(auth, String(request.id));
    // Every success body carries `data` (General conventions); GET /v1 also
    // has its members at the top level, so both readings hold.
    return new TopLevelBody({ ...body, data: body });
  }

  @Get('me')
  @RequireAccess({ principals: [...EVERY_PRINCIPAL.principals] })
  @PublicOperation({
    operationId: 'getMe',
    summary: 'The principal and scopes of the calling key',
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
