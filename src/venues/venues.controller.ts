import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import { ErrorCode } from '../common/errors/error-code';
import { EXAMPLES } from '../common/openapi/openapi-examples';
import { PublicOperation } from '../common/openapi/public-operation.decorator';
import { VenuePage, type VenueResponseDto } from './dto/venue.dto';
import { VenuesService } from './venues.service';

@ApiTags('Venues')
@Controller('v1/venues')
export class VenuesController {
  constructor(private readonly venues: VenuesService) {}

  @Get()
  @RequireAccess({ scope: 'events:read', principals: ['venue'] })
  @PublicOperation({
    operationId: 'listVenues',
    summary: 'Get the venue of the key',
    description:
      'A page whose `data` holds exactly one Venue: the venue the key belongs to, with its 30 oldest live locations in creation order.',
    success: { status: 200, description: 'A one-row page.', body: { page: VenuePage }, example: EXAMPLES.venuePage },
    errors: { 403: [ErrorCode.InsufficientScope], 404: [ErrorCode.NotFound] },
  })
  async list(@Auth() auth: AuthContext): Promise<Page<VenueResponseDto>> {
    return Page.single([await this.venues.describe(auth.principal.id)]);
  }
}
