import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { Allow } from 'class-validator';
import { InternalOperations, InternalRefusals } from '../common/openapi/internal-operations.decorator';
import { ValidatedBody } from '../common/validation/validated-body';
import { PortalLinksService, type MintedPortalLink } from './portal-links.service';

/** Body of POST /internal/portal-links; the service checks each member. */
export class CreatePortalLinkDto {
  @Allow() accountId?: unknown;
  @Allow() readOnly?: unknown;
  @Allow() ttlSeconds?: unknown;
}

@InternalOperations('Webhook portal')
@Controller('internal')
export class PortalLinksInternalController {
  constructor(private readonly links: PortalLinksService) {}

  @Post('portal-links')
  @HttpCode(201)
  @InternalRefusals({ conflict: 'A worker without PORTAL_URL serves no portal' })
  mint(@ValidatedBody() body?: CreatePortalLinkDto): Promise<MintedPortalLink> {
    return this.links.mint({ accountId: body?.accountId, readOnly: body?.readOnly, ttlSeconds: body?.ttlSeconds });
  }

  @Post('accounts/:accountId/portal-sessions/revoke')
  @HttpCode(200)
  revoke(@Param('accountId') accountId: string): Promise<{ accountId: string; revoked: number }> {
    return this.links.revoke(accountId);
  }
}
