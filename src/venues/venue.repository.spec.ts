import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { MAX_VENUE_LOCATIONS_SHOWN, VenueRepository, type NewLocation } from './venue.repository';

function location(id: string, timeZone = 'UTC'): NewLocation {
  return { id, displayName: `Room ${id}`, address: null, city: 'Berlin', country: 'DE', timeZone };
}

/** Every statement of VenueRepository, on real PostgreSQL. */
describe('VenueRepository', () => {
  let db: RepositoryDatabase;
  let venues: VenueRepository;

  async function createVenue(id: string, name: string, locations: NewLocation[]): Promise<void> {
    await db.unitOfWork.run(async (tx) => {
      await venues.insertVenue(
        { id, name, slug: null, description: { EN: 'Hall' }, websiteUrl: null, category: 'club', claimStatus: null },
        tx,
      );
      await venues.insertLocations(id, locations, tx);
    });
  }

  before(async () => {
    db = await repositoryDatabase();
    venues = new VenueRepository(db.database, db.pager);
    await createVenue('ven_a', 'Alpha', [location('loc_a1', 'Europe/Berlin'), location('loc_a2')]);
    await createVenue('ven_b', 'Beta 50%', [location('loc_b1')]);
  });
  after(async () => db.close());

  it('reads a venue as its view, with its live locations in creation order', async () => {
    assert.deepEqual(await venues.findWithLocations('ven_a'), {
      id: 'ven_a',
      name: 'Alpha',
      slug: null,
      description: { EN: 'Hall' },
      websiteUrl: null,
      category: 'club',
      claimStatus: null,
      locations: ['loc_a1', 'loc_a2'].map((id) => ({
        id,
        displayName: `Room ${id}`,
        address: null,
        city: 'Berlin',
        country: 'DE',
      })),
    });
    assert.equal(await venues.findWithLocations('ven_missing'), null);
  });

  it(`shows at most ${MAX_VENUE_LOCATIONS_SHOWN} locations, the oldest, even when added across transactions`, async () => {
    const many = Array.from({ length: MAX_VENUE_LOCATIONS_SHOWN }, (_, i) =>
      location(`loc_m${String(i).padStart(2, '0')}`),
    );
    await createVenue('ven_many', 'Many', many.slice(0, 10));
    await db.unitOfWork.run(async (tx) => {
      assert.equal(await venues.lockVenue('ven_many', tx), true);
      await venues.insertLocations('ven_many', [...many.slice(10), location('loc_newest')], tx);
    });
    const shown = (await venues.findWithLocations('ven_many'))?.locations.map((l) => l.id);
    assert.deepEqual(
      shown,
      many.map((l) => l.id),
    );
  });

  it('soft-deletes a location of its own venue only, once; a deleted location is no longer live but keeps its venue', async () => {
    assert.equal(await venues.softDeleteLocation('ven_b', 'loc_a2'), false, "another venue's location");
    assert.equal(await venues.softDeleteLocation('ven_a', 'loc_a2'), true);
    assert.equal(await venues.softDeleteLocation('ven_a', 'loc_a2'), false, 'already deleted');
    assert.deepEqual(
      (await venues.findWithLocations('ven_a'))?.locations.map((l) => l.id),
      ['loc_a1'],
    );
    assert.equal(await venues.findLiveLocation('loc_a2'), null);
    assert.deepEqual(await venues.findLiveLocation('loc_a1'), { venueId: 'ven_a', timeZone: 'Europe/Berlin' });
    assert.equal(await venues.findVenueOfLocation('loc_a2'), 'ven_a');
    assert.equal(await venues.findVenueOfLocation('loc_missing'), null);
    assert.deepEqual(await venues.timeZonesOf('ven_a'), { loc_a1: 'Europe/Berlin', loc_a2: 'UTC' });
  });

  it('returns the locations it inserts as their views, in the order given', async () => {
    const created = await db.unitOfWork.run((tx) =>
      venues.insertLocations('ven_b', [location('loc_b2', 'Europe/Paris'), location('loc_b3')], tx),
    );
    assert.deepEqual(created, [
      {
        id: 'loc_b2',
        displayName: 'Room loc_b2',
        address: null,
        city: 'Berlin',
        country: 'DE',
        timeZone: 'Europe/Paris',
      },
      { id: 'loc_b3', displayName: 'Room loc_b3', address: null, city: 'Berlin', country: 'DE', timeZone: 'UTC' },
    ]);
    assert.deepEqual(await db.unitOfWork.run((tx) => venues.insertLocations('ven_b', [], tx)), []);
  });

  it('tells existence and locks only a venue that exists, inside the caller transaction', async () => {
    assert.equal(await venues.exists('ven_a'), true);
    assert.equal(await venues.exists('ven_missing'), false);
    await db.unitOfWork.run(async (tx) => {
      assert.equal(await venues.lockVenue('ven_missing', tx), false);
      assert.equal(await venues.exists('ven_b', tx), true);
      assert.deepEqual(await venues.findLiveLocation('loc_b1', tx), { venueId: 'ven_b', timeZone: 'UTC' });
      assert.equal(await venues.findVenueOfLocation('loc_b1', tx), 'ven_b');
    });
  });

  it('pages the dashboard list newest first with live location counts, and searches names literally', async () => {
    const page = await venues.page({ limit: 10, cursor: null, updatedAfter: null }, null);
    const counts = Object.fromEntries(page.items.map((venue) => [venue.id, venue.liveLocations]));
    assert.equal(counts['ven_b'], 3);
    assert.equal(counts['ven_many'], MAX_VENUE_LOCATIONS_SHOWN + 1);
    const first = await venues.page({ limit: 1, cursor: null, updatedAfter: null }, null);
    const second = await venues.page({ limit: 1, cursor: first.nextCursor, updatedAfter: null }, null);
    assert.notEqual(first.items[0]?.id, second.items[0]?.id);
    const found = await venues.page({ limit: 10, cursor: null, updatedAfter: null }, '50%');
    assert.deepEqual(
      found.items.map((venue) => venue.id),
      ['ven_b'],
    );
  });
});
