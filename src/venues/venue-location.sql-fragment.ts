import { sql, type SqlParameter, type SqlFragment } from '../database/sql/sql-fragment';

/**
 * The one place another context may name `venue_location` in SQL: a
 * statement that must span two contexts in one round trip (the venue key's
 * keyset page of events) composes this fragment instead of writing its own
 * join, so the coupling is explicit and greppable. `venueId` is the
 * statement's parameter holding the venue id.
 *
 * "At a venue's address" (internal-api.md): the event's `locationId` is one
 * of the venue's locations, soft-deleted ones included.
 */
export function locationIdsOfVenueSql(venueId: SqlParameter): SqlFragment {
  return sql`SELECT l.id FROM venue_location l WHERE l.venue_id = ${venueId}`;
}
