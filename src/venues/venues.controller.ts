import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import type { VenueResponseDto } from './dto/venue.dto';
import { VenuesService } from './venues.service';

@ApiTags('Venues')
@ApiBearerAuth()
@Controller('v1/venues')
export class VenuesController {
  constructor(private readonly venues: VenuesService) {}

  @Get()
  @RequireAccess({ scope: 'events:read', principals: ['venue'] })
  @ApiOperation({ summary: 'The venue the key belongs to, as a one-row page' })
  async list(@Auth() auth: AuthContext): Promise<Page<VenueResponseDto>> {
    return Page.single([await this.venues.describe(auth.principal.id)]);
  }
}
