import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { newResourceId } from '../../libs/ids/resource-id';
import { flattenLocalisedText, uppercaseLocaleKeys } from '../../libs/locale/localised-text';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DomainError } from '../common/errors/domain-error';
import { UnitOfWork } from '../database/unit-of-work';
import type { CreateLocationDto, CreateVenueDto, LocationResponseDto, VenueResponseDto } from './dto/venue.dto';
import { VenueLocationEntity } from './entities/venue-location.entity';
import { VenueEntity } from './entities/venue.entity';

/** GET /v1/venues shows at most this many locations: the oldest live ones, in creation order. */
export const MAX_VENUE_LOCATIONS_SHOWN = 30;

@Injectable()
export class VenuesService {
  constructor(
    @InjectRepository(VenueEntity) private readonly venues: Repository<VenueEntity>,
    @InjectRepository(VenueLocationEntity) private readonly locations: Repository<VenueLocationEntity>,
    private readonly unitOfWork: UnitOfWork,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(input: CreateVenueDto): Promise<VenueResponseDto> {
    const venueId = newResourceId('ven');
    await this.unitOfWork.run(async ({ manager }) => {
      await manager.insert(VenueEntity, {
        id: venueId,
        name: input.name,
        slug: input.slug ?? null,
        description: input.description === undefined ? null : uppercaseLocaleKeys(input.description),
        websiteUrl: input.websiteUrl ?? null,
        category: input.category ?? null,
        claimStatus: input.claimStatus ?? null,
      });
      // One insert per location keeps created_at distinct and ordered as given.
      for (const location of input.locations ?? []) {
        await manager.insert(VenueLocationEntity, this.newLocation(venueId, location));
      }
    });
    return this.describe(venueId);
  }

  async addLocation(venueId: string, input: CreateLocationDto): Promise<LocationResponseDto> {
    if (!(await this.exists(venueId))) throw DomainError.notFound('Venue');
    const location = this.newLocation(venueId, input);
    await this.locations.insert(location);
    return {
      id: location.id,
      displayName: location.displayName,
      address: location.address,
      city: location.city,
      country: location.country,
      timeZone: location.timeZone,
    };
  }

  async deleteLocation(venueId: string, locationId: string): Promise<{ id: string; deleted: true }> {
    const result = await this.locations
      .createQueryBuilder()
      .update()
      .set({ deletedAt: () => 'now()' })
      .where('id = :locationId AND venue_id = :venueId AND deleted_at IS NULL', { locationId, venueId })
      .execute();
    if (result.affected === 0) throw DomainError.notFound('Location');
    return { id: locationId, deleted: true };
  }

  async exists(venueId: string): Promise<boolean> {
    return this.venues.exists({ where: { id: venueId } });
  }

  /** The venue exactly as `GET /v1/venues` shows it. */
  async describe(venueId: string): Promise<VenueResponseDto> {
    const venue = await this.venues.findOne({ where: { id: venueId } });
    if (venue === null) throw DomainError.notFound('Venue');
    const locations = await this.locations
      .createQueryBuilder('l')
      .where('l.venue_id = :venueId AND l.deleted_at IS NULL', { venueId })
      .orderBy('l.created_at', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .limit(MAX_VENUE_LOCATIONS_SHOWN)
      .getMany();
    return {
      id: venue.id,
      name: venue.name,
      slug: venue.slug,
      description: flattenLocalisedText(venue.description),
      websiteUrl: venue.websiteUrl,
      category: venue.category,
      claimStatus: venue.claimStatus,
      url: `${this.config.publicWebUrl}/venues/${encodeURIComponent(venue.id)}`,
      locations: locations.map((location) => ({
        id: location.id,
        displayName: location.displayName,
        address: location.address,
        city: location.city,
        country: location.country,
      })),
    };
  }

  /** The time zone of a live location, for `dateOnly`; null when the location is unknown or deleted. */
  async timeZoneOfLocation(locationId: string): Promise<string | null> {
    const location = await this.locations.findOne({ where: { id: locationId }, select: { timeZone: true, deletedAt: true } });
    return location === null || location.deletedAt !== null ? null : location.timeZone;
  }

  private newLocation(venueId: string, input: CreateLocationDto): VenueLocationEntity {
    const location = new VenueLocationEntity();
    location.id = newResourceId('loc');
    location.venueId = venueId;
    location.displayName = input.displayName ?? null;
    location.address = input.address ?? null;
    location.city = input.city ?? null;
    location.country = input.country ?? null;
    location.timeZone = input.timeZone ?? 'UTC';
    location.deletedAt = null;
    return location;
  }
}
