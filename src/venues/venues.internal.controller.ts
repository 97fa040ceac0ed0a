import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations } from '../common/openapi/internal-operations.decorator';
import { CreateLocationDto, CreateVenueDto, type LocationResponseDto, type VenueResponseDto } from './dto/venue.dto';
import { VenuesService } from './venues.service';

@InternalOperations('Venues')
@Controller('internal/venues')
export class VenuesInternalController {
  constructor(private readonly venues: VenuesService) {}

  @Post()
  @HttpCode(201)
  create(@ValidatedBody() body: CreateVenueDto): Promise<VenueResponseDto> {
    return this.venues.create(body);
  }

  @Post(':venueId/locations')
  @HttpCode(201)
  addLocation(
    @Param('venueId') venueId: string,
    @ValidatedBody() body: CreateLocationDto,
  ): Promise<LocationResponseDto> {
    return this.venues.addLocation(venueId, body);
  }

  @Delete(':venueId/locations/:locationId')
  deleteLocation(
    @Param('venueId') venueId: string,
    @Param('locationId') locationId: string,
  ): Promise<{ id: string; deleted: true }> {
    return this.venues.deleteLocation(venueId, locationId);
  }
}
