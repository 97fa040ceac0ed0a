/**
 * The one place another context may name `venue_location` in SQL: a
 * statement that must span two contexts in one round trip (the venue key's
 * keyset page of events) composes this fragment instead of writing its own
 * join, so the coupling is explicit and greppable. `venueParam` is the
 * placeholder (e.g. `$1`) holding the venue id.
 *
 * "At a venue's address" (internal-api.md): the event's `locationId` is one
 * of the venue's locations, soft-deleted ones included.
 */
export function locationIdsOfVenueSql(venueParam: string): string {
  return `SELECT l.id FROM venue_location l WHERE l.venue_id = ${venueParam}`;
}
