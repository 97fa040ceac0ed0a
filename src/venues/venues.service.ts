import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { newResourceId } from '../../libs/ids/resource-id';
import { flattenLocalisedText, uppercaseLocaleKeys } from '../../libs/locale/localised-text';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DomainError } from '../common/errors/domain-error';
import type { Page } from '../common/envelope/page';
import { KeysetPager, type Ordering } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { containsPattern } from '../common/pagination/search-pattern';
import { isoTimestampSql } from '../database/iso-timestamp-sql';
import { UnitOfWork } from '../database/unit-of-work';
import type {
  CreateLocationDto,
  CreateVenueDto,
  LocationResponseDto,
  VenueLocationResponseDto,
  VenueResponseDto,
} from './dto/venue.dto';
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
    private readonly pager: KeysetPager,
  ) {}

  async create(input: CreateVenueDto): Promise<VenueResponseDto> {
    const venueId = newResourceId('ven');
    await this.unitOfWork.run(async ({ manager }) => {
      await manager.insert(VenueEntity, {
        id: venueId,
        name: input.name,
        slug: input.slug ?? null,
        // IsOptional lets an explicit null through; it means "no description".
        description: input.description == null ? null : uppercaseLocaleKeys(input.description),
        websiteUrl: input.websiteUrl ?? null,
        category: input.category ?? null,
        claimStatus: input.claimStatus ?? null,
      });
      await this.insertLocations(manager, venueId, input.locations ?? []);
    });
    return this.describe(venueId);
  }

  async addLocation(venueId: string, input: CreateLocationDto): Promise<LocationResponseDto> {
    return this.unitOfWork.run(async ({ manager }) => {
      // The venue row lock serialises location inserts per venue, so their creation times stay strictly ordered.
      const venue = await manager.query<unknown[]>(`SELECT 1 FROM venue WHERE id = $1 FOR NO KEY UPDATE`, [venueId]);
      if (venue.length === 0) throw DomainError.notFound('Venue');
      const [location] = await this.insertLocations(manager, venueId, [input]);
      if (location === undefined) throw new Error('inserting one location returned none');
      return location;
    });
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

  /**
   * The venue exactly as `GET /v1/venues` shows it, in one statement and
   * without entity hydration: its oldest live locations, in creation order.
   */
  async describe(venueId: string): Promise<VenueResponseDto> {
    const rows = await this.venues.manager.query<VenueRow[]>(
      `SELECT v.id, v.name, v.slug, v.description, v.website_url, v.category, v.claim_status,
              COALESCE((
                SELECT json_agg(json_build_object(
                         'id', l.id, 'displayName', l.display_name, 'address', l.address,
                         'city', l.city, 'country', l.country) ORDER BY l.created_at, l.id)
                  FROM (SELECT * FROM venue_location
                         WHERE venue_id = v.id AND deleted_at IS NULL
                         ORDER BY created_at, id
                         LIMIT $2) l
              ), '[]'::json) AS locations
         FROM venue v WHERE v.id = $1`,
      [venueId, MAX_VENUE_LOCATIONS_SHOWN],
    );
    const venue = rows[0];
    if (venue === undefined) throw DomainError.notFound('Venue');
    return {
      id: venue.id,
      name: venue.name,
      slug: venue.slug,
      description: flattenLocalisedText(venue.description),
      websiteUrl: venue.website_url,
      category: venue.category,
      claimStatus: venue.claim_status,
      // Built from the id: slugs are display only and not unique.
      url: `${this.config.publicWebUrl}/venues/${encodeURIComponent(venue.id)}`,
      locations: venue.locations,
    };
  }

  /** The dashboard's list, newest first: every venue, or those whose id is `search` or whose name contains it. */
  page(request: PageRequest, search: string | null): Promise<Page<VenueListItem>> {
    const ordering: Ordering = { name: 'dashboard_venues:created_at_desc', column: 'v.created_at', direction: 'DESC' };
    const filtered = search !== null && search !== '';
    return this.pager.page(
      {
        select:
          `v.id, v.name, ${isoTimestampSql('v.created_at')} AS "createdAt", ` +
          `(SELECT count(*)::int FROM venue_location l WHERE l.venue_id = v.id AND l.deleted_at IS NULL) AS "liveLocations"`,
        from: 'venue v',
        idColumn: 'v.id',
        where: filtered ? ['(v.id = $1 OR v.name ILIKE $2)'] : [],
        params: filtered ? [search, containsPattern(search)] : [],
        anchorTable: 'venue',
        orderings: { default: ordering, updatedAfter: ordering },
      },
      request,
      (row: VenueListItem) => ({
        id: row.id,
        name: row.name,
        createdAt: row.createdAt,
        liveLocations: row.liveLocations,
      }),
    );
  }

  /** Time zones of the venue's live locations by id (the public Venue shape leaves them out; the dashboard shows them). */
  async timeZonesOf(venueId: string): Promise<Record<string, string>> {
    const rows = await this.locations.find({ where: { venueId }, select: { id: true, timeZone: true } });
    return Object.fromEntries(rows.map((row) => [row.id, row.timeZone]));
  }

  /** The time zone of a live location, for `dateOnly`; null when the location is unknown or deleted. */
  async timeZoneOfLocation(locationId: string): Promise<string | null> {
    const location = await this.locations.findOne({
      where: { id: locationId },
      select: { timeZone: true, deletedAt: true },
    });
    return location === null || location.deletedAt !== null ? null : location.timeZone;
  }

  /**
   * Inserts locations in the order given. Locations are listed by creation
   * time, and now() is fixed for a whole transaction, so each gets a creation
   * time one millisecond after the venue's latest: the listing order is the
   * creation order, within one request and across requests.
   */
  private async insertLocations(
    manager: EntityManager,
    venueId: string,
    inputs: CreateLocationDto[],
  ): Promise<LocationResponseDto[]> {
    if (inputs.length === 0) return [];
    const locations: LocationResponseDto[] = inputs.map((input) => ({
      id: newResourceId('loc'),
      displayName: input.displayName ?? null,
      address: input.address ?? null,
      city: input.city ?? null,
      country: input.country ?? null,
      timeZone: input.timeZone ?? 'UTC',
    }));
    const column = <K extends keyof LocationResponseDto>(key: K): Array<LocationResponseDto[K]> =>
      locations.map((location) => location[key]);
    await manager.query(
      `INSERT INTO venue_location (id, venue_id, display_name, address, city, country, time_zone, created_at)
       SELECT l.id, $1, l.display_name, l.address, l.city, l.country, l.time_zone,
              start.at + (l.n - 1) * interval '1 millisecond'
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
              WITH ORDINALITY AS l (id, display_name, address, city, country, time_zone, n),
              (SELECT GREATEST(date_trunc('milliseconds', clock_timestamp()),
                               max(created_at) + interval '1 millisecond') AS at
                 FROM venue_location WHERE venue_id = $1) start`,
      [
        venueId,
        column('id'),
        column('displayName'),
        column('address'),
        column('city'),
        column('country'),
        column('timeZone'),
      ],
    );
    return locations;
  }
}

interface VenueRow {
  id: string;
  name: string | null;
  slug: string | null;
  description: Record<string, string> | null;
  website_url: string | null;
  category: string | null;
  claim_status: string | null;
  locations: VenueLocationResponseDto[];
}

export interface VenueListItem {
  id: string;
  name: string;
  createdAt: string;
  liveLocations: number;
}
