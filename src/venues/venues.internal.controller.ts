import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { DeletedDto } from '../common/openapi/deleted-schema';
import { InternalOperations, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import { CreateLocationDto, CreateVenueDto, LocationResponseDto, VenueResponseDto } from './dto/venue.dto';
import { VenuesService } from './venues.service';

@InternalOperations('Venues')
@Controller('internal/venues')
export class VenuesInternalController {
  constructor(private readonly venues: VenuesService) {}

  @Post()
  @HttpCode(201)
  @InternalSuccess({
    status: 201,
    description: 'The Venue exactly as `GET /v1/venues` shows it.',
    body: { data: VenueResponseDto },
  })
  create(@ValidatedBody() body: CreateVenueDto): Promise<VenueResponseDto> {
    return this.venues.create(body);
  }

  @Post(':venueId/locations')
  @HttpCode(201)
  @InternalSuccess({ status: 201, description: 'The location with its `id`.', body: { data: LocationResponseDto } })
  addLocation(
    @Param('venueId') venueId: string,
    @ValidatedBody() body: CreateLocationDto,
  ): Promise<LocationResponseDto> {
    return this.venues.addLocation(venueId, body);
  }

  @Delete(':venueId/locations/:locationId')
  @InternalSuccess({
    status: 200,
    description: 'Soft delete: omitted from the venue record from then on.',
    body: { data: DeletedDto },
  })
  deleteLocation(@Param('venueId') venueId: string, @Param('locationId') locationId: string): Promise<DeletedDto> {
    return this.venues.deleteLocation(venueId, locationId);
  }
}
