import { Controller, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { InternalOperations, InternalRefusals, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import { ValidatedBody } from '../common/validation/validated-body';
import { PortalLinksService, type MintedPortalLink } from './portal-links.service';

/** Body of POST /internal/portal-links; the service checks each member. */
@ApiSchema({ name: 'PortalLinkCreate' })
export class CreatePortalLinkDto {
  @ApiProperty({ description: 'An organiser or a venue id (`404 not_found` when unknown).' })
  @Allow()
  accountId?: unknown;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: 'Pages only: no resend, recover, enable or rotate.',
  })
  @Allow()
  readOnly?: unknown;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 60,
    maximum: 3600,
    default: 900,
    description: 'How long the link may be opened; it opens at most once.',
  })
  @Allow()
  ttlSeconds?: unknown;
}

@ApiSchema({ name: 'PortalLink', description: 'A link that opens the portal once.' })
class PortalLinkDto {
  @ApiProperty({
    format: 'uri',
    description: '`<PORTAL_URL>#token=<token>`: the token travels in the fragment, never in a request line or a log.',
  })
  url!: string;
  @ApiProperty({ format: 'date-time', description: 'Until when the link may be opened.' }) expiresAt!: string;
  @ApiProperty() readOnly!: boolean;
}

@ApiSchema({ name: 'PortalSessionsRevoked' })
class PortalSessionsRevokedDto {
  @ApiProperty() accountId!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Portal sessions and unopened links ended.' })
  revoked!: number;
}

@InternalOperations('Webhook portal')
@Controller('internal')
export class PortalLinksInternalController {
  constructor(private readonly links: PortalLinksService) {}

  @Post('portal-links')
  @HttpCode(201)
  @InternalRefusals({ conflict: 'A worker without PORTAL_URL serves no portal' })
  @Header('Cache-Control', 'no-store')
  @InternalSuccess({
    status: 201,
    description: 'The link, to hand to the account.',
    body: { data: PortalLinkDto },
    headers: ['Cache-Control'],
  })
  mint(@ValidatedBody() body?: CreatePortalLinkDto): Promise<MintedPortalLink> {
    return this.links.mint({ accountId: body?.accountId, readOnly: body?.readOnly, ttlSeconds: body?.ttlSeconds });
  }

  @Post('accounts/:accountId/portal-sessions/revoke')
  @HttpCode(200)
  @InternalSuccess({
    status: 200,
    description: 'Every portal session and unopened link of the account ended, on every instance within 1 s.',
    body: { data: PortalSessionsRevokedDto },
  })
  revoke(@Param('accountId') accountId: string): Promise<{ accountId: string; revoked: number }> {
    return this.links.revoke(accountId);
  }
}
