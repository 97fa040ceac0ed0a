import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Page } from '../common/envelope/page';
import { KeysetPager, type Ordering } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { containsPattern } from '../common/pagination/search-pattern';
import { isoTimestampSql } from '../database/iso-timestamp-sql';
import type { VenueLocationResponseDto } from './dto/venue.dto';
import { VenueLocationEntity } from './entities/venue-location.entity';
import { VenueEntity } from './entities/venue.entity';

/** One row of `venue` with its oldest live locations, as `GET /v1/venues` needs it. */
export interface VenueRow {
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

export interface NewVenue {
  id: string;
  name: string;
  slug: string | null;
  description: Record<string, string> | null;
  websiteUrl: string | null;
  category: string | null;
  claimStatus: string | null;
}

export interface NewLocation {
  id: string;
  displayName: string | null;
  address: string | null;
  city: string | null;
  country: string | null;
  timeZone: string;
}

type Db = EntityManager | DataSource;

/**
 * All SQL on `venue` and `venue_location`. Other contexts never read these
 * tables: they call VenuesService, whose read methods take the caller's
 * transaction, or compose the named fragment in venue-location.sql-fragment.ts.
 */
@Injectable()
export class VenueRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pager: KeysetPager,
  ) {}

  async insertVenue(venue: NewVenue, manager: EntityManager): Promise<void> {
    await manager.insert(VenueEntity, venue);
  }

  /** Locks the venue row so location inserts are serialised per venue; false when there is no such venue. */
  async lockVenue(venueId: string, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>(`SELECT 1 FROM venue WHERE id = $1 FOR NO KEY UPDATE`, [venueId]);
    return rows.length > 0;
  }

  /**
   * Inserts locations in the order given. Locations are listed by creation
   * time, and now() is fixed for a whole transaction, so each gets a creation
   * time one millisecond after the venue's latest: the listing order is the
   * creation order, within one request and across requests.
   */
  async insertLocations(venueId: string, locations: NewLocation[], manager: EntityManager): Promise<void> {
    if (locations.length === 0) return;
    const column = <K extends keyof NewLocation>(key: K): Array<NewLocation[K]> =>
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
  }

  /** Soft delete; false when the location is unknown, of another venue, or already deleted. */
  async softDeleteLocation(venueId: string, locationId: string): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(VenueLocationEntity)
      .createQueryBuilder()
      .update()
      .set({ deletedAt: () => 'now()' })
      .where('id = :locationId AND venue_id = :venueId AND deleted_at IS NULL', { locationId, venueId })
      .execute();
    return result.affected !== 0;
  }

  async exists(venueId: string, db: Db = this.dataSource): Promise<boolean> {
    const rows = await db.query<unknown[]>(`SELECT 1 FROM venue WHERE id = $1`, [venueId]);
    return rows.length > 0;
  }

  /** The venue with its `limit` oldest live locations, in creation order, in one statement. */
  async findWithLocations(venueId: string, limit: number): Promise<VenueRow | null> {
    const rows = await this.dataSource.query<VenueRow[]>(
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
      [venueId, limit],
    );
    return rows[0] ?? null;
  }

  /** Newest first: every venue, or those whose id is `search` or whose name contains it. */
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

  async timeZonesOf(venueId: string): Promise<Record<string, string>> {
    const rows = await this.dataSource.query<Array<{ id: string; time_zone: string }>>(
      'SELECT id, time_zone FROM venue_location WHERE venue_id = $1',
      [venueId],
    );
    return Object.fromEntries(rows.map((row) => [row.id, row.time_zone]));
  }

  /** A live location's venue and time zone; null when it is unknown or soft-deleted. */
  async findLiveLocation(
    locationId: string,
    db: Db = this.dataSource,
  ): Promise<{ venueId: string; timeZone: string } | null> {
    const rows = await db.query<Array<{ venue_id: string; time_zone: string }>>(
      'SELECT venue_id, time_zone FROM venue_location WHERE id = $1 AND deleted_at IS NULL',
      [locationId],
    );
    const row = rows[0];
    return row === undefined ? null : { venueId: row.venue_id, timeZone: row.time_zone };
  }

  /** The venue a location belongs to, soft-deleted locations included; null when unknown. */
  async findVenueOfLocation(locationId: string, db: Db = this.dataSource): Promise<string | null> {
    const rows = await db.query<Array<{ venue_id: string }>>('SELECT venue_id FROM venue_location WHERE id = $1', [
      locationId,
    ]);
    return rows[0]?.venue_id ?? null;
  }
}
