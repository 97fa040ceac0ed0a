import { Injectable } from '@nestjs/common';
import type { Page } from '../common/envelope/page';
import { defineKeysetList, KeysetPager, type Ordering } from '../common/pagination/keyset-pager';
import type { PageRequest } from '../common/pagination/page-request';
import { containsPattern } from '../common/pagination/search-pattern';
import { column, defineColumns, isoTime } from '../database/sql/sql-columns';
import { sql } from '../database/sql/sql-fragment';
import { defineStatement, type NoParams, NO_PARAMS } from '../database/sql/sql-statement';
import { Database, type SqlTarget } from '../database/sql/sql-target';
import type { Transaction } from '../database/unit-of-work';
import type { VenueLocationResponseDto } from './dto/venue.dto';
import { VenueEntity } from './entities/venue.entity';

/** GET /v1/venues shows at most this many locations: the oldest live ones, in creation order. */
export const MAX_VENUE_LOCATIONS_SHOWN = 30;

/** A venue with its oldest live locations, in creation order, as `GET /v1/venues` shows it. */
export const VENUE_VIEW = defineColumns({
  id: column<string>('v.id'),
  name: column<string | null>('v.name'),
  slug: column<string | null>('v.slug'),
  description: column<Record<string, string> | null>('v.description'),
  websiteUrl: column<string | null>('v.website_url'),
  category: column<string | null>('v.category'),
  claimStatus: column<string | null>('v.claim_status'),
  locations: column<VenueLocationResponseDto[]>(
    `COALESCE((
       SELECT json_agg(json_build_object(
                'id', l.id, 'displayName', l.display_name, 'address', l.address,
                'city', l.city, 'country', l.country) ORDER BY l.created_at, l.id)
         FROM (SELECT * FROM venue_location
                WHERE venue_id = v.id AND deleted_at IS NULL
                ORDER BY created_at, id
                LIMIT ${MAX_VENUE_LOCATIONS_SHOWN}) l
     ), '[]'::json)`,
  ),
});
export type VenueView = typeof VENUE_VIEW.View;

/** A venue as the dashboard lists it. */
export const VENUE_LIST_VIEW = defineColumns({
  id: column<string>('v.id'),
  name: column<string>('v.name'),
  createdAt: isoTime('v.created_at'),
  liveLocations: column<number>(
    '(SELECT count(*)::int FROM venue_location l WHERE l.venue_id = v.id AND l.deleted_at IS NULL)',
  ),
});
export type VenueListItem = typeof VENUE_LIST_VIEW.View;

/** A location as its creation returns it: the public fields and its time zone. */
export const LOCATION_VIEW = defineColumns({
  id: column<string>('l.id'),
  displayName: column<string | null>('l.display_name'),
  address: column<string | null>('l.address'),
  city: column<string | null>('l.city'),
  country: column<string | null>('l.country'),
  timeZone: column<string>('l.time_zone'),
});
export type LocationView = typeof LOCATION_VIEW.View;

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

const LOCK_VENUE = defineStatement<{ venueId: string }>(
  (p) => sql`SELECT 1 FROM venue WHERE id = ${p.venueId} FOR NO KEY UPDATE`,
  { prepared: false },
);

/**
 * Locations are listed by creation time, and now() is fixed for a whole
 * transaction, so each gets a creation time one millisecond after the
 * venue's latest: the listing order is the creation order, within one
 * request and across requests.
 */
const INSERT_LOCATIONS = defineStatement<
  {
    venueId: string;
    ids: string[];
    displayNames: Array<string | null>;
    addresses: Array<string | null>;
    cities: Array<string | null>;
    countries: Array<string | null>;
    timeZones: string[];
  },
  LocationView
>(
  (p) => sql`INSERT INTO venue_location AS l (id, venue_id, display_name, address, city, country, time_zone, created_at)
             SELECT l.id, ${p.venueId}, l.display_name, l.address, l.city, l.country, l.time_zone,
                    start.at + (l.n - 1) * interval '1 millisecond'
               FROM unnest(${p.ids}::text[], ${p.displayNames}::text[], ${p.addresses}::text[],
                           ${p.cities}::text[], ${p.countries}::text[], ${p.timeZones}::text[])
                    WITH ORDINALITY AS l (id, display_name, address, city, country, time_zone, n),
                    (SELECT GREATEST(date_trunc('milliseconds', clock_timestamp()),
                                     max(created_at) + interval '1 millisecond') AS at
                       FROM venue_location WHERE venue_id = ${p.venueId}) start
          RETURNING ${LOCATION_VIEW.select}`,
  { prepared: false },
);

const SOFT_DELETE_LOCATION = defineStatement<{ venueId: string; locationId: string }>(
  (p) => sql`UPDATE venue_location SET deleted_at = now()
              WHERE id = ${p.locationId} AND venue_id = ${p.venueId} AND deleted_at IS NULL`,
  { prepared: false },
);

const EXISTS = defineStatement<{ venueId: string }>((p) => sql`SELECT 1 FROM venue WHERE id = ${p.venueId}`, {
  prepared: false,
});

const VENUE_BY_ID = defineStatement<{ venueId: string }, VenueView>(
  (p) => sql`SELECT ${VENUE_VIEW.select} FROM venue v WHERE v.id = ${p.venueId}`,
  { prepared: false },
);

const ALL = defineStatement<NoParams, VenueView>(
  () => sql`SELECT ${VENUE_VIEW.select} FROM venue v ORDER BY v.created_at, v.id`,
  { prepared: false },
);

const TIME_ZONES = defineStatement<{ venueId: string }, { id: string; timeZone: string }>(
  (p) => sql`SELECT id, time_zone AS "timeZone" FROM venue_location WHERE venue_id = ${p.venueId}`,
  { prepared: false },
);

/** Read by every event write that names a location (its venue, and the time zone `dateOnly` uses). */
const LIVE_LOCATION = defineStatement<{ locationId: string }, { venueId: string; timeZone: string }>(
  (p) => sql`SELECT venue_id AS "venueId", time_zone AS "timeZone" FROM venue_location
              WHERE id = ${p.locationId} AND deleted_at IS NULL`,
  { prepared: true },
);

const VENUE_OF_LOCATION = defineStatement<{ locationId: string }, { venueId: string }>(
  (p) => sql`SELECT venue_id AS "venueId" FROM venue_location WHERE id = ${p.locationId}`,
  { prepared: false },
);

const DASHBOARD_ORDERING: Ordering = {
  name: 'dashboard_venues:created_at_desc',
  column: 'v.created_at',
  direction: 'DESC',
};

/** The dashboard's list, newest first: every venue, or (SEARCHED) those whose id is the term or whose name contains it. */
const EVERY = defineKeysetList<NoParams, VenueListItem>({
  select: VENUE_LIST_VIEW.select,
  from: 'venue v',
  idColumn: 'v.id',
  where: () => [],
  anchorTable: 'venue',
  orderings: { default: DASHBOARD_ORDERING, updatedAfter: DASHBOARD_ORDERING },
  prepared: false,
});
const SEARCHED = defineKeysetList<{ search: string; pattern: string }, VenueListItem>({
  select: VENUE_LIST_VIEW.select,
  from: 'venue v',
  idColumn: 'v.id',
  where: (p) => [sql`(v.id = ${p.search} OR v.name ILIKE ${p.pattern})`],
  anchorTable: 'venue',
  orderings: { default: DASHBOARD_ORDERING, updatedAfter: DASHBOARD_ORDERING },
  prepared: false,
});

/**
 * All SQL on `venue` and `venue_location`. Other contexts never read these
 * tables: they call VenuesService, whose read methods take the caller's
 * transaction, or compose the named fragment in venue-location.sql-fragment.ts.
 */
@Injectable()
export class VenueRepository {
  constructor(
    private readonly database: Database,
    private readonly pager: KeysetPager,
  ) {}

  async insertVenue(venue: NewVenue, tx: Transaction): Promise<void> {
    await tx.manager.insert(VenueEntity, venue);
  }

  /** Locks the venue row so location inserts are serialised per venue; false when there is no such venue. */
  async lockVenue(venueId: string, tx: Transaction): Promise<boolean> {
    return (await LOCK_VENUE.one({ venueId }, tx)) !== null;
  }

  /** Inserts locations in the order given, each created one millisecond after the one before; returns their views. */
  async insertLocations(venueId: string, locations: NewLocation[], tx: Transaction): Promise<LocationView[]> {
    if (locations.length === 0) return [];
    return INSERT_LOCATIONS.rows(
      {
        venueId,
        ids: locations.map((location) => location.id),
        displayNames: locations.map((location) => location.displayName),
        addresses: locations.map((location) => location.address),
        cities: locations.map((location) => location.city),
        countries: locations.map((location) => location.country),
        timeZones: locations.map((location) => location.timeZone),
      },
      tx,
    );
  }

  /** Soft delete; false when the location is unknown, of another venue, or already deleted. */
  async softDeleteLocation(venueId: string, locationId: string): Promise<boolean> {
    return (await SOFT_DELETE_LOCATION.affected({ venueId, locationId }, this.database)) > 0;
  }

  async exists(venueId: string, target: SqlTarget = this.database): Promise<boolean> {
    return (await EXISTS.one({ venueId }, target)) !== null;
  }

  /** The venue with its oldest live locations, in creation order, in one statement. */
  async findWithLocations(venueId: string, target: SqlTarget = this.database): Promise<VenueView | null> {
    return VENUE_BY_ID.one({ venueId }, target);
  }

  /** Every venue with its oldest live locations, oldest venue first. */
  async list(): Promise<VenueView[]> {
    return ALL.rows(NO_PARAMS, this.database);
  }

  /** Newest first: every venue, or those whose id is `search` or whose name contains it. */
  page(request: PageRequest, search: string | null): Promise<Page<VenueListItem>> {
    if (search === null || search === '') return this.pager.page(EVERY, NO_PARAMS, request);
    return this.pager.page(SEARCHED, { search, pattern: containsPattern(search) }, request);
  }

  async timeZonesOf(venueId: string): Promise<Record<string, string>> {
    const rows = await TIME_ZONES.rows({ venueId }, this.database);
    return Object.fromEntries(rows.map((row) => [row.id, row.timeZone]));
  }

  /** A live location's venue and time zone; null when it is unknown or soft-deleted. */
  async findLiveLocation(
    locationId: string,
    target: SqlTarget = this.database,
  ): Promise<{ venueId: string; timeZone: string } | null> {
    return LIVE_LOCATION.one({ locationId }, target);
  }

  /** The venue a location belongs to, soft-deleted locations included; null when unknown. */
  async findVenueOfLocation(locationId: string, target: SqlTarget = this.database): Promise<string | null> {
    return (await VENUE_OF_LOCATION.one({ locationId }, target))?.venueId ?? null;
  }
}
