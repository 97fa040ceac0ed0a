import { Injectable } from '@nestjs/common';
import { newResourceId } from '../../libs/ids/resource-id';
import { uppercaseLocaleKeys } from '../../libs/locale/localised-text';
import type { Page } from '../common/envelope/page';
import { DomainError } from '../common/errors/domain-error';
import type { PageRequest } from '../common/pagination/page-request';
import { UnitOfWork, type Transaction } from '../database/unit-of-work';
import type { CreateLocationDto, CreateVenueDto, LocationResponseDto, VenueResponseDto } from './dto/venue.dto';
import { VenuePresenter } from './venue.presenter';
import { VenueRepository, type NewLocation, type VenueListItem } from './venue.repository';

export type { VenueListItem } from './venue.repository';

/** A live location as other contexts need it: its venue and the time zone `dateOnly` uses. */
export interface LiveLocation {
  venueId: string;
  timeZone: string;
}

@Injectable()
export class VenuesService {
  constructor(
    private readonly venues: VenueRepository,
    private readonly presenter: VenuePresenter,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  async create(input: CreateVenueDto): Promise<VenueResponseDto> {
    const venueId = newResourceId('ven');
    return this.unitOfWork.run(async (tx) => {
      await this.venues.insertVenue(
        {
          id: venueId,
          name: input.name,
          slug: input.slug ?? null,
          // IsOptional lets an explicit null through; it means "no description".
          description: input.description == null ? null : uppercaseLocaleKeys(input.description),
          websiteUrl: input.websiteUrl ?? null,
          category: input.category ?? null,
          claimStatus: input.claimStatus ?? null,
        },
        tx,
      );
      await this.venues.insertLocations(venueId, (input.locations ?? []).map(newLocation), tx);
      return this.describe(venueId, tx);
    });
  }

  async addLocation(venueId: string, input: CreateLocationDto): Promise<LocationResponseDto> {
    return this.unitOfWork.run(async (tx) => {
      // The venue row lock serialises location inserts per venue, so their creation times stay strictly ordered.
      if (!(await this.venues.lockVenue(venueId, tx))) throw DomainError.notFound('Venue');
      const [location] = await this.venues.insertLocations(venueId, [newLocation(input)], tx);
      if (location === undefined) throw new Error('an INSERT … RETURNING returned no row');
      return location;
    });
  }

  async deleteLocation(venueId: string, locationId: string): Promise<{ id: string; deleted: true }> {
    if (!(await this.venues.softDeleteLocation(venueId, locationId))) throw DomainError.notFound('Location');
    return { id: locationId, deleted: true };
  }

  /** Whether the venue exists; inside the caller's transaction when one is given. */
  async exists(venueId: string, tx?: Transaction): Promise<boolean> {
    return this.venues.exists(venueId, tx);
  }

  /** The venue exactly as `GET /v1/venues` shows it: its oldest live locations, in creation order. */
  async describe(venueId: string, tx?: Transaction): Promise<VenueResponseDto> {
    const venue = await this.venues.findWithLocations(venueId, tx);
    if (venue === null) throw DomainError.notFound('Venue');
    return this.presenter.present(venue);
  }

  /** Every venue as `describe` shows it, oldest first. */
  async list(): Promise<VenueResponseDto[]> {
    return (await this.venues.list()).map((venue) => this.presenter.present(venue));
  }

  /** A live location's venue and time zone (for `locationId` and `dateOnly`); null when unknown or deleted. */
  async liveLocation(locationId: string, tx?: Transaction): Promise<LiveLocation | null> {
    return this.venues.findLiveLocation(locationId, tx);
  }

  /** The dashboard's list, newest first: every venue, or those whose id is `search` or whose name contains it. */
  page(request: PageRequest, search: string | null): Promise<Page<VenueListItem>> {
    return this.venues.page(request, search);
  }

  /** Time zones of the venue's locations by id (the public Venue shape leaves them out; the dashboard shows them). */
  async timeZonesOf(venueId: string): Promise<Record<string, string>> {
    return this.venues.timeZonesOf(venueId);
  }

  /** The venue owning a location, soft-deleted locations included (`event.published` recipients). */
  async venueOfLocation(locationId: string, tx?: Transaction): Promise<string | null> {
    return this.venues.findVenueOfLocation(locationId, tx);
  }
}

function newLocation(input: CreateLocationDto): NewLocation {
  return {
    id: newResourceId('loc'),
    displayName: input.displayName ?? null,
    address: input.address ?? null,
    city: input.city ?? null,
    country: input.country ?? null,
    timeZone: input.timeZone ?? 'UTC',
  };
}
