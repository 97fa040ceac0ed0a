import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { OrganiserRepository } from '../identity/organiser.repository';
import { VenueRepository } from '../venues/venue.repository';
import { EventEntity } from './entities/event.entity';
import { EventRepository } from './event.repository';

const ORGANISER = { type: 'organiser', id: 'org_own' } as const;
const STRANGER = { type: 'organiser', id: 'org_other' } as const;
const VENUE = { type: 'venue', id: 'ven_1' } as const;

function newEvent(id: string, fields: Partial<EventEntity> = {}): EventEntity {
  const at = new Date('2030-01-01T10:00:00.000Z');
  return Object.assign(new EventEntity(), {
    id,
    organizerId: ORGANISER.id,
    visibility: null,
    title: { EN: `Title ${id}` },
    description: null,
    startTime: new Date('2030-06-01T18:00:00.000Z'),
    endTime: null,
    dateOnly: false,
    locationId: null,
    additionalLocationIds: [],
    planning: null,
    onlineMeeting: null,
    imageBlobName: null,
    imageBlobNames: null,
    tags: null,
    subtags: null,
    languages: null,
    metadata: null,
    themeColor: null,
    secondaryThemeColor: null,
    backgroundStyle: null,
    colorMode: null,
    backgroundColor: null,
    headingFont: null,
    titleFontScale: null,
    backgroundPrimaryColor: null,
    backgroundParams: null,
    plasmaPreset: null,
    hideLocation: false,
    hideRelatedEvents: false,
    groupSizeOverride: null,
    seriesId: null,
    links: null,
    createdAt: at,
    updatedAt: at,
    firstPublishedAt: null,
    venueId: null,
    refundOffer: null,
    ...fields,
  });
}

/** Every statement of EventRepository, on real PostgreSQL. */
describe('EventRepository', () => {
  let db: RepositoryDatabase;
  let events: EventRepository;

  const insert = (event: EventEntity) => db.unitOfWork.run((tx) => events.insert(event, tx));

  before(async () => {
    db = await repositoryDatabase();
    events = new EventRepository(db.database, db.pager);
    const organisers = new OrganiserRepository(db.dataSource, db.database, db.pager);
    await organisers.insert({ id: ORGANISER.id, name: 'Own', placeholder: false });
    await organisers.insert({ id: STRANGER.id, name: 'Other', placeholder: false });
    await organisers.insert({ id: 'org_placeholder', name: 'Unclaimed', placeholder: true });
    const venues = new VenueRepository(db.database, db.pager);
    await db.unitOfWork.run(async (tx) => {
      await venues.insertVenue(
        {
          id: VENUE.id,
          name: 'Hall',
          slug: null,
          description: null,
          websiteUrl: null,
          category: null,
          claimStatus: null,
        },
        tx,
      );
      const base = { displayName: null, address: null, city: null, country: null, timeZone: 'UTC' };
      await venues.insertLocations(VENUE.id, [{ id: 'loc_1', ...base }], tx);
    });
  });
  after(async () => db.close());

  it('returns the view from the insert, timestamps as ISO text, and writes every column back as read', async () => {
    const written = await insert(
      newEvent('evt_round', {
        links: [{ label: 'Site', url: 'https://example.test' }],
        tags: ['music'],
        titleFontScale: 1.25,
        endTime: new Date('2030-06-01T20:00:00.000Z'),
      }),
    );
    assert.deepEqual(written, {
      id: 'evt_round',
      title: { EN: 'Title evt_round' },
      visibility: null,
      startTime: '2030-06-01T18:00:00.000Z',
      endTime: '2030-06-01T20:00:00.000Z',
      updatedAt: '2030-01-01T10:00:00.000Z',
      organizerId: ORGANISER.id,
    });
    const stored = await db.dataSource.getRepository(EventEntity).findOneByOrFail({ id: 'evt_round' });
    const locked = await db.unitOfWork.run((tx) => events.lockForWrite('evt_round', tx));
    assert.deepEqual({ ...locked?.record }, { ...stored }, 'the locked record is the row TypeORM reads');
    assert.deepEqual(locked?.view, {
      id: 'evt_round',
      title: { EN: 'Title evt_round' },
      visibility: null,
      startTime: '2030-06-01T18:00:00.000Z',
      endTime: '2030-06-01T20:00:00.000Z',
      updatedAt: '2030-01-01T10:00:00.000Z',
    });
  });

  it('saves the whole locked row and returns the new view', async () => {
    await insert(newEvent('evt_save'));
    const saved = await db.unitOfWork.run(async (tx) => {
      const locked = await events.lockForWrite('evt_save', tx, ORGANISER.id);
      assert.ok(locked !== null);
      locked.record.visibility = 'unlisted';
      locked.record.links = [{ url: 'https://example.test/a' }];
      locked.record.updatedAt = new Date('2030-01-01T10:00:00.001Z');
      return events.save(locked.record, tx);
    });
    assert.equal(saved.visibility, 'unlisted');
    assert.equal(saved.updatedAt, '2030-01-01T10:00:00.001Z');
    const stored = await db.dataSource.getRepository(EventEntity).findOneByOrFail({ id: 'evt_save' });
    assert.deepEqual(stored.links, [{ url: 'https://example.test/a' }]);
  });

  it("scopes reads and locks to the owner: another organiser's event is not returned", async () => {
    await insert(newEvent('evt_scoped'));
    assert.equal((await events.findVisible(ORGANISER, 'evt_scoped'))?.id, 'evt_scoped');
    assert.equal(await events.findVisible(STRANGER, 'evt_scoped'), null);
    assert.equal(await db.unitOfWork.run((tx) => events.lockForWrite('evt_scoped', tx, STRANGER.id)), null);
    assert.equal(await events.findVisible({ type: 'professional', id: ORGANISER.id }, 'evt_scoped'), null);
    assert.deepEqual(await events.findOwner('evt_scoped'), { organizerId: ORGANISER.id });
    assert.equal(await events.findOwner('evt_missing'), null);
    assert.deepEqual(await db.unitOfWork.run((tx) => events.lockOwner('evt_scoped', tx)), {
      organizerId: ORGANISER.id,
    });
  });

  it('shows a venue the public events at its locations, and unlisted ones only of a placeholder or no organiser', async () => {
    const at = { locationId: 'loc_1' };
    await insert(newEvent('evt_v_public', { ...at, visibility: 'public' }));
    await insert(newEvent('evt_v_draft', { ...at, visibility: null }));
    await insert(newEvent('evt_v_unlisted', { ...at, visibility: 'unlisted' }));
    await insert(newEvent('evt_v_unlisted_ph', { ...at, visibility: 'unlisted', organizerId: 'org_placeholder' }));
    await insert(newEvent('evt_v_unlisted_none', { ...at, visibility: 'unlisted', organizerId: null }));
    await insert(newEvent('evt_v_elsewhere', { visibility: 'public' }));
    const visible = async (id: string): Promise<boolean> => (await events.findVisible(VENUE, id)) !== null;
    assert.equal(await visible('evt_v_public'), true);
    assert.equal(await visible('evt_v_draft'), false);
    assert.equal(await visible('evt_v_unlisted'), false);
    assert.equal(await visible('evt_v_unlisted_ph'), true);
    assert.equal(await visible('evt_v_unlisted_none'), true);
    assert.equal(await visible('evt_v_elsewhere'), false);
    const page = await events.pageVisibleTo(VENUE, { limit: 10, cursor: null, updatedAfter: null });
    assert.deepEqual(page.items.map((event) => event.id).sort(), [
      'evt_v_public',
      'evt_v_unlisted_none',
      'evt_v_unlisted_ph',
    ]);
  });

  it('pages an organiser its own events with a start time, newest start first, across a cursor', async () => {
    const page = async (cursor: string | null) =>
      events.pageVisibleTo(STRANGER, { limit: 1, cursor, updatedAfter: null });
    await insert(newEvent('evt_s1', { organizerId: STRANGER.id, startTime: new Date('2031-01-01T00:00:00Z') }));
    await insert(newEvent('evt_s2', { organizerId: STRANGER.id, startTime: new Date('2031-02-01T00:00:00Z') }));
    await insert(newEvent('evt_s_unscheduled', { organizerId: STRANGER.id, startTime: null }));
    const first = await page(null);
    assert.deepEqual(
      first.items.map((event) => event.id),
      ['evt_s2'],
    );
    const second = await page(first.nextCursor);
    assert.deepEqual(
      second.items.map((event) => event.id),
      ['evt_s1'],
    );
    assert.equal(second.hasMore, false);
  });

  it('publishes once: the first publication is reported exactly once, and a public published event is left alone', async () => {
    await insert(newEvent('evt_pub', { visibility: 'unlisted' }));
    const publish = (at: string) =>
      db.unitOfWork.run(async (tx) => {
        await events.lockForWrite('evt_pub', tx);
        return events.publish('evt_pub', new Date(at), tx);
      });
    const first = await publish('2030-02-01T00:00:00.000Z');
    assert.equal(first?.firstPublication, true);
    assert.equal(first?.visibility, 'public');
    assert.equal(first?.updatedAt, '2030-02-01T00:00:00.000Z');
    assert.equal(await publish('2030-02-02T00:00:00.000Z'), null, 'already public and published');
    await db.dataSource.query(`UPDATE event SET visibility = 'unlisted' WHERE id = 'evt_pub'`);
    const again = await publish('2030-02-03T00:00:00.000Z');
    assert.equal(again?.firstPublication, false, 'public again, but not published for the first time');
    const stored = await db.dataSource.getRepository(EventEntity).findOneByOrFail({ id: 'evt_pub' });
    assert.equal(stored.firstPublishedAt?.toISOString(), '2030-02-01T00:00:00.000Z');
  });

  it('touches only updatedAt, and deletes an event once', async () => {
    await insert(newEvent('evt_touch'));
    const touched = await db.unitOfWork.run((tx) =>
      events.touch('evt_touch', new Date('2030-03-01T00:00:00.000Z'), tx),
    );
    assert.equal(touched.updatedAt, '2030-03-01T00:00:00.000Z');
    assert.equal(touched.title?.['EN'], 'Title evt_touch');
    assert.equal(await db.unitOfWork.run((tx) => events.delete('evt_touch', tx)), true);
    assert.equal(await db.unitOfWork.run((tx) => events.delete('evt_touch', tx)), false);
  });
});
