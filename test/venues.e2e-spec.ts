import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Client } from 'pg';
import { assertErrorBody } from './support/error-body';
import { fixtures } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import type { TestService } from './support/test-service';
import { nth } from './support/defined';
import { withApp } from './support/with-app';

const VENUE_FIELDS = ['id', 'name', 'slug', 'description', 'websiteUrl', 'category', 'claimStatus', 'url', 'locations'];
const LOCATION_FIELDS = ['id', 'displayName', 'address', 'city', 'country'];

interface Location {
  id: string;
  displayName: string | null;
}

describe('venues', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;

  /** Creates a venue through the internal API and mints a venue key for it. */
  async function venueWithKey(body: Record<string, unknown>): Promise<{ venue: Record<string, any>; key: string }> {
    const created = await admin('POST', '/internal/venues', { body });
    assert.equal(created.status, 201, created.text);
    const venue = created.body.data as Record<string, any>;
    const key = await fixtures(service).key({ type: 'venue', id: venue['id'] as string });
    return { venue, key };
  }

  async function listed(key: string): Promise<Record<string, any>> {
    const result = await api('GET', '/v1/venues', { key });
    assert.equal(result.status, 200, result.text);
    return result.body.data[0] as Record<string, any>;
  }

  const rooms = (count: number, from = 1): Array<{ displayName: string }> =>
    Array.from({ length: count }, (_, index) => ({ displayName: `Room ${from + index}` }));

  const app = withApp();
  before(() => {
    ({ service, api, admin } = app);
  });

  describe('GET /v1/venues', () => {
    it("answers a page envelope holding exactly the caller's venue", async () => {
      await venueWithKey({ name: 'Someone Else' });
      const { venue, key } = await venueWithKey({
        name: 'Hall',
        slug: 'hall',
        description: { en: 'A hall' },
        websiteUrl: 'https://hall.example.test',
        category: 'concert_hall',
        claimStatus: 'claimed',
        locations: [
          { displayName: 'Main', address: 'Street 1', city: 'Berlin', country: 'DE', timeZone: 'Europe/Berlin' },
        ],
      });
      const result = await api('GET', '/v1/venues', { key });
      assert.equal(result.status, 200, result.text);
      assert.deepEqual(Object.keys(result.body).sort(), ['data', 'has_more', 'next_cursor']);
      assert.equal(result.body.has_more, false);
      assert.equal(result.body.next_cursor, null);
      assert.equal(result.body.data.length, 1);
      const shown = result.body.data[0];
      assert.deepEqual(Object.keys(shown), VENUE_FIELDS);
      assert.deepEqual(shown, venue, 'the internal create answers the venue as GET /v1/venues shows it');
      assert.deepEqual(
        { ...shown, id: undefined, url: undefined, locations: undefined },
        {
          id: undefined,
          name: 'Hall',
          slug: 'hall',
          description: 'A hall',
          websiteUrl: 'https://hall.example.test',
          category: 'concert_hall',
          claimStatus: 'claimed',
          url: undefined,
          locations: undefined,
        },
      );
      assert.equal(shown.locations.length, 1);
      assert.deepEqual(Object.keys(shown.locations[0]), LOCATION_FIELDS);
      assert.equal(shown.locations[0].timeZone, undefined, 'timeZone is not part of the public Venue');
    });

    it('refuses an organiser key, and a venue key without events:read, with 403 insufficient_scope', async () => {
      const organiser = await fixtures(service).organiser();
      assertErrorBody(await api('GET', '/v1/venues', { key: organiser.key }), 403, 'insufficient_scope');
      const { venue } = await venueWithKey({ name: 'Webhooks only' });
      const key = await fixtures(service).key({ type: 'venue', id: venue['id'] as string }, ['webhooks:read']);
      assertErrorBody(await api('GET', '/v1/venues', { key }), 403, 'insufficient_scope');
    });

    it('builds url from the venue id, never the slug', async () => {
      const { venue, key } = await venueWithKey({ name: 'Slugged', slug: 'the-slug' });
      const shown = await listed(key);
      assert.equal(shown['url'], `${service.config.publicWebUrl}/venues/${venue['id']}`);
      assert.ok(!shown['url'].includes('the-slug'));
      const twin = await venueWithKey({ name: 'Same slug', slug: 'the-slug' });
      assert.notEqual((await listed(twin.key))['url'], shown['url'], 'two venues sharing a slug keep distinct urls');
    });

    it('flattens description to one language: EN, else the first locale code', async () => {
      const cases: Array<[unknown, string | null]> = [
        [{ de: 'Halle', en: 'Hall' }, 'Hall'],
        [{ fr: 'Salle', DE: 'Halle' }, 'Halle'],
        [{}, null],
        [null, null],
        [undefined, null],
      ];
      for (const [description, expected] of cases) {
        const { key } = await venueWithKey({ name: 'Described', description });
        assert.equal((await listed(key))['description'], expected, JSON.stringify(description));
      }
    });

    it('omits a location deleted after the venue was listed, on the next call', async () => {
      const { venue, key } = await venueWithKey({ name: 'Shrinking', locations: rooms(3) });
      const before = (await listed(key))['locations'] as Location[];
      assert.equal(before.length, 3);
      const [kept, gone, alsoKept] = before;
      assert.ok(kept && gone && alsoKept, 'three locations listed');
      const deleted = await admin('DELETE', `/internal/venues/${venue['id']}/locations/${gone.id}`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(deleted.body, { data: { id: gone.id, deleted: true } });
      const after = (await listed(key))['locations'] as Location[];
      assert.deepEqual(
        after.map((location) => location.id),
        [kept.id, alsoKept.id],
      );
    });

    it('shows the oldest 30 of 40 locations created in one request, in creation order', async () => {
      const { venue, key } = await venueWithKey({ name: 'Forty rooms', locations: rooms(40) });
      const names = ((await listed(key))['locations'] as Location[]).map((location) => location.displayName);
      assert.deepEqual(
        names,
        rooms(30).map((room) => room.displayName),
      );
      assert.deepEqual(
        (venue['locations'] as Location[]).map((location) => location.displayName),
        names,
        'the create answer shows the same 30',
      );
    });

    it('shows the oldest 30 live locations when they were added one by one, and the 31st moves up after a deletion', async () => {
      const { venue, key } = await venueWithKey({ name: 'Growing', locations: rooms(5) });
      const added: Location[] = [];
      for (const room of rooms(35, 6)) {
        const result = await admin('POST', `/internal/venues/${venue['id']}/locations`, { body: room });
        assert.equal(result.status, 201, result.text);
        added.push(result.body.data as Location);
      }
      const shown = ((await listed(key))['locations'] as Location[]).map((location) => location.displayName);
      assert.deepEqual(
        shown,
        rooms(30).map((room) => room.displayName),
      );

      const first = nth((await listed(key))['locations'] as Location[], 0, 'listed locations');
      await admin('DELETE', `/internal/venues/${venue['id']}/locations/${first.id}`);
      const afterDelete = ((await listed(key))['locations'] as Location[]).map((location) => location.displayName);
      assert.deepEqual(
        afterDelete,
        rooms(30, 2).map((room) => room.displayName),
      );
    });

    it('answers 404 not_found once the venue itself is gone', async () => {
      const { venue, key } = await venueWithKey({ name: 'Vanishing' });
      const db = new Client({ connectionString: service.databaseUrl });
      await db.connect();
      try {
        await db.query(`DELETE FROM venue WHERE id = $1`, [venue['id']]);
      } finally {
        await db.end();
      }
      assertErrorBody(await api('GET', '/v1/venues', { key }), 404, 'not_found');
    });
  });

  describe('internal venue operations', () => {
    it('adds a location and answers it with its id and time zone', async () => {
      const { venue, key } = await venueWithKey({ name: 'Annex' });
      const result = await admin('POST', `/internal/venues/${venue['id']}/locations`, {
        body: { displayName: 'Annex', city: 'Hamburg', timeZone: 'Europe/Berlin' },
      });
      assert.equal(result.status, 201, result.text);
      assert.match(result.body.data.id, /^loc_[0-9a-f]{24}$/);
      assert.deepEqual(
        { ...result.body.data, id: undefined },
        {
          id: undefined,
          displayName: 'Annex',
          address: null,
          city: 'Hamburg',
          country: null,
          timeZone: 'Europe/Berlin',
        },
      );
      const shown = (await listed(key))['locations'] as Location[];
      assert.deepEqual(
        shown.map((location) => location.id),
        [result.body.data.id],
      );
    });

    it('defaults a location time zone to UTC', async () => {
      const { venue } = await venueWithKey({ name: 'Plain' });
      const result = await admin('POST', `/internal/venues/${venue['id']}/locations`, { body: {} });
      assert.equal(result.status, 201, result.text);
      assert.equal(result.body.data.timeZone, 'UTC');
    });

    it('answers 404 not_found for an unknown venue or location, and for a location already deleted', async () => {
      const { venue } = await venueWithKey({ name: 'Lookups', locations: rooms(1) });
      const locationId = nth(venue['locations'] as Location[], 0, 'locations of the venue').id;
      assertErrorBody(await admin('POST', '/internal/venues/ven_nothing/locations', { body: {} }), 404, 'not_found');
      assertErrorBody(await admin('DELETE', `/internal/venues/ven_nothing/locations/${locationId}`), 404, 'not_found');
      assertErrorBody(await admin('DELETE', `/internal/venues/${venue['id']}/locations/loc_nothing`), 404, 'not_found');
      assert.equal((await admin('DELETE', `/internal/venues/${venue['id']}/locations/${locationId}`)).status, 200);
      assertErrorBody(
        await admin('DELETE', `/internal/venues/${venue['id']}/locations/${locationId}`),
        404,
        'not_found',
      );
    });

    it('refuses bad venue input with 400 invalid_argument', async () => {
      const bodies: unknown[] = [
        {},
        { name: '' },
        { name: 5 },
        { name: 'x', description: 'plain text' },
        { name: 'x', description: { en: 5 } },
        { name: 'x', locations: 'Main hall' },
        { name: 'x', locations: [null] },
        { name: 'x', locations: [{ timeZone: 'Mars/Olympus' }] },
        { name: 'x', slug: 9 },
      ];
      for (const body of bodies) {
        assertErrorBody(await admin('POST', '/internal/venues', { body }), 400, 'invalid_argument');
      }
      const { venue } = await venueWithKey({ name: 'Strict' });
      const result = await admin('POST', `/internal/venues/${venue['id']}/locations`, { body: { city: 12 } });
      assertErrorBody(result, 400, 'invalid_argument');
    });
  });
});
