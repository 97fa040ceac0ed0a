import { EventEmitter2 } from '@nestjs/event-emitter';
import assert from 'node:assert/strict';
import { hash, randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { IdempotencyService } from '../src/events/idempotency/idempotency.service';
import { databaseClient } from './support/database-client';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

describe('events', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  let organiser: Organiser;
  let other: Organiser;
  let venue: Venue;
  let published: string[] = [];

  const create = (body: Record<string, unknown>, key = organiser.key, idempotencyKey = randomUUID()) =>
    api('POST', '/v1/events', { key, body, headers: { 'idempotency-key': idempotencyKey } });

  const countEvents = async (organizerId: string): Promise<number> =>
    Number((await db.query('SELECT count(*) FROM event WHERE organizer_id = $1', [organizerId])).rows[0].count);

  const app = withApp();
  before(async () => {
    ({ service, api, admin, db } = app);
    const make = fixtures(service);
    organiser = await make.organiser({ scopes: ['events:read', 'events:write', 'orders:read'] });
    other = await make.organiser({ scopes: ['events:read', 'events:write'] });
    venue = await make.venue({ locations: 3, timeZone: 'Europe/Berlin' });
    service.running.app.get(EventEmitter2).on('event.published', (event: { eventId: string }) => {
      published.push(event.eventId);
    });
  });

  describe('response shape', () => {
    it('answers exactly the Event fields, with title flattened to EN and url built from the id', async () => {
      const created = await create({ title: { de: 'Abend', en: 'Evening' }, startTime: '2027-05-01T18:00:00Z' });
      assert.equal(created.status, 201, created.text);
      const event = created.body.data;
      assert.deepEqual(Object.keys(event).sort(), [
        'endTime',
        'id',
        'startTime',
        'title',
        'updatedAt',
        'url',
        'visibility',
      ]);
      assert.equal(event.title, 'Evening');
      assert.equal(event.visibility, 'draft');
      assert.equal(event.startTime, '2027-05-01T18:00:00.000Z');
      assert.equal(event.endTime, null);
      assert.equal(event.url, `https://events.example.test/events/${event.id}`);
      assert.match(event.updatedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    it('flattens a title without EN to its alphabetically first locale', async () => {
      const created = await create({ title: { fr: 'Soirée', de: 'Abend' }, startTime: Date.UTC(2027, 4, 2) });
      assert.equal(created.body.data.title, 'Abend');
    });

    it('reads an event with no stored visibility as draft', async () => {
      const created = await create({ startTime: '2027-05-03T10:00:00Z' });
      const stored = await db.query('SELECT visibility FROM event WHERE id = $1', [created.body.data.id]);
      assert.equal(stored.rows[0].visibility, null);
      const read = await api('GET', `/v1/events/${created.body.data.id}`, { key: organiser.key });
      assert.equal(read.body.data.visibility, 'draft');
    });
  });

  describe('writes', () => {
    it('drops server-owned and unknown keys silently', async () => {
      const created = await create({
        startTime: '2027-06-01T10:00:00Z',
        id: 'evt_chosen',
        organizerId: other.id,
        createdAt: '2000-01-01T00:00:00Z',
        priority: 99,
        refundOffer: { x: 1 },
        somethingElse: true,
      });
      assert.equal(created.status, 201, created.text);
      assert.notEqual(created.body.data.id, 'evt_chosen');
      const row = (
        await db.query('SELECT organizer_id, priority, refund_offer, created_at FROM event WHERE id = $1', [
          created.body.data.id,
        ])
      ).rows[0];
      assert.equal(row.organizer_id, organiser.id);
      assert.equal(row.priority, null);
      assert.equal(row.refund_offer, null);
      assert.ok(new Date(row.created_at).getFullYear() > 2020);
    });

    it('refuses a writable field of the wrong shape, naming it, and writes nothing', async () => {
      const before = await countEvents(organiser.id);
      for (const [field, value] of [
        ['title', 'not a map'],
        ['tags', 'not an array'],
        ['tags', [1, 2]],
        ['hideLocation', 'yes'],
        ['metadata', [1]],
      ] as const) {
        const result = await create({ startTime: '2027-06-02T10:00:00Z', [field]: value });
        assertErrorBody(result, 400, 'invalid_argument');
        assert.match(result.body.message, new RegExp(field));
      }
      assert.equal(await countEvents(organiser.id), before);
    });

    it('uppercases locale keys on write', async () => {
      const created = await create({
        startTime: '2027-06-03T10:00:00Z',
        title: { en: 'Hi' },
        description: { 'de-ch': 'Grüezi' },
      });
      const row = (await db.query('SELECT title, description FROM event WHERE id = $1', [created.body.data.id]))
        .rows[0];
      assert.deepEqual(row.title, { EN: 'Hi' });
      assert.deepEqual(row.description, { 'DE-CH': 'Grüezi' });
    });

    it('requires startTime on create', async () => {
      const result = await create({ title: { en: 'No time' } });
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /startTime/);
    });

    it('refuses an unparseable startTime or endTime', async () => {
      assertErrorBody(await create({ startTime: 'next tuesday' }), 400, 'invalid_argument');
      assertErrorBody(await create({ startTime: '2027-02-30T10:00:00Z' }), 400, 'invalid_argument');
      assertErrorBody(await create({ startTime: '2027-06-03T10:00:00Z', endTime: 'soon' }), 400, 'invalid_argument');
    });

    it('accepts startTime as epoch milliseconds', async () => {
      const created = await create({ startTime: Date.UTC(2027, 6, 4, 9, 30) });
      assert.equal(created.body.data.startTime, '2027-07-04T09:30:00.000Z');
    });

    it('refuses a startTime or endTime string of digits (an ISO year or basic form), never storing it as epoch milliseconds of 1970', async () => {
      for (const startTime of ['2027', '20270101', '1800000000000']) {
        const refused = await create({ startTime });
        assertErrorBody(refused, 400, 'invalid_argument');
        assert.match(
          refused.body.message,
          /startTime must be an ISO 8601 date-time string or integer epoch milliseconds/,
        );
      }
      assertErrorBody(await create({ startTime: '2027-06-03T10:00:00Z', endTime: '99999' }), 400, 'invalid_argument');
    });

    it('stores a dateOnly event at noon in the time zone of its location', async () => {
      const created = await create({
        startTime: '2027-07-10T03:00:00Z',
        dateOnly: true,
        locationId: venue.locationIds[0],
      });
      assert.equal(created.status, 201, created.text);
      // Europe/Berlin is UTC+2 in July: local noon is 10:00 UTC.
      assert.equal(created.body.data.startTime, '2027-07-10T10:00:00.000Z');
    });

    it('refuses with 400, never a 500, a dateOnly event at a location whose stored time zone is no IANA zone', async () => {
      const mars = await fixtures(service).venue({ timeZone: 'UTC' });
      // A row holds such a zone only from past the service's checks (a direct write, a row older than the checks):
      // every way the service makes a location refuses it.
      await db.query(`UPDATE venue_location SET time_zone = 'Mars/Olympus' WHERE id = $1`, [mars.locationIds[0]]);
      const dateOnly = await create({ startTime: '2027-07-10', dateOnly: true, locationId: mars.locationIds[0] });
      assertErrorBody(dateOnly, 400, 'invalid_argument');
      assert.match(dateOnly.body.message, /"Mars\/Olympus", which is no IANA zone/);
      const timed = await create({ startTime: '2027-07-10T19:00:00Z', locationId: mars.locationIds[0] });
      assert.equal(timed.status, 201, 'an event with a time of day needs no zone');
    });

    it('stores a dateOnly event given as a date alone at noon of that day, at a location west of UTC too', async () => {
      const newYork = await fixtures(service).venue({ timeZone: 'America/New_York' });
      const created = await create({
        startTime: '2027-06-15',
        endTime: '2027-06-16',
        dateOnly: true,
        locationId: newYork.locationIds[0],
      });
      assert.equal(created.status, 201, created.text);
      // New York is UTC-4 in June: local noon is 16:00 UTC, on the day given.
      assert.equal(created.body.data.startTime, '2027-06-15T16:00:00.000Z');
      assert.equal(created.body.data.endTime, '2027-06-16T16:00:00.000Z');
    });

    it('refuses with 400, storing nothing, a dateOnly startTime or endTime whose noon at its location is outside the instants kept, and pages past the ends that are kept', async () => {
      const owner = await fixtures(service).organiser({ scopes: ['events:read', 'events:write'] });
      const [pagoPago, westmost, kiritimati] = [
        await fixtures(service).venue({ timeZone: 'Pacific/Pago_Pago' }),
        await fixtures(service).venue({ timeZone: 'Etc/GMT+12' }),
        await fixtures(service).venue({ timeZone: 'Pacific/Kiritimati' }),
      ];
      const dateOnlyAt = (where: { locationIds: string[] }, times: Record<string, string>) =>
        create({ ...times, dateOnly: true, locationId: where.locationIds[0] }, owner.key);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const first = await dateOnlyAt(pagoPago, { startTime: '0001-01-01T00:00:00Z' });
        assertErrorBody(first, 400, 'invalid_argument');
        assert.match(
          first.body.message,
          /^startTime is on 0001-01-01, .* Pacific\/Pago_Pago is 0000-12-31T23:22:48\.000Z, outside the instants kept \(0001-01-01T00:00:00\.000Z to 9999-12-31T23:59:59\.999Z\)\.$/,
        );
      }
      const last = await dateOnlyAt(westmost, { startTime: '9999-12-30', endTime: '9999-12-31' });
      assertErrorBody(last, 400, 'invalid_argument');
      assert.match(last.body.message, /^endTime is on 9999-12-31, .* Etc\/GMT\+12 is \+010000-01-01T00:00:00\.000Z/);
      assert.equal(await countEvents(owner.id), 0);

      const earliest = await dateOnlyAt(westmost, { startTime: '0001-01-01' });
      assert.equal(earliest.status, 201, earliest.text);
      assert.equal(earliest.body.data.startTime, '0001-01-02T00:00:00.000Z');
      const latest = await dateOnlyAt(kiritimati, { startTime: '9999-12-31T23:59:59.999Z' });
      assert.equal(latest.status, 201, latest.text);
      assert.equal(latest.body.data.startTime, '9999-12-31T22:00:00.000Z');
      const moved = await api('PATCH', `/v1/events/${earliest.body.data.id as string}`, {
        key: owner.key,
        body: { locationId: pagoPago.locationIds[0] },
      });
      assertErrorBody(moved, 400, 'invalid_argument');
      assert.match(moved.body.message, /^startTime is on 0001-01-01, /);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const page = await api('GET', `/v1/events?limit=1${query}`, { key: owner.key });
        assert.equal(page.status, 200, page.text);
        seen.push(...(page.body.data as Array<{ startTime: string }>).map((event) => event.startTime));
        cursor = page.body.next_cursor as string | null;
      } while (cursor !== null);
      assert.deepEqual(seen.sort(), ['0001-01-02T00:00:00.000Z', '9999-12-31T22:00:00.000Z']);
    });

    it('keeps a dateOnly event on its calendar day when it moves to a location in another zone', async () => {
      const tokyo = await fixtures(service).venue({ timeZone: 'Asia/Tokyo' });
      const newYork = await fixtures(service).venue({ timeZone: 'America/New_York' });
      // Noon on 15 June in Tokyo is 03:00 UTC, which is still 14 June in New York.
      const created = await create({
        startTime: '2027-06-15T03:00:00Z',
        dateOnly: true,
        locationId: tokyo.locationIds[0],
      });
      assert.equal(created.body.data.startTime, '2027-06-15T03:00:00.000Z', created.text);
      const id = created.body.data.id as string;
      const moved = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { locationId: newYork.locationIds[0] },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.body.data.startTime, '2027-06-15T16:00:00.000Z');
      const back = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { locationId: tokyo.locationIds[0] },
      });
      assert.equal(back.body.data.startTime, '2027-06-15T03:00:00.000Z');
    });

    it('leaves a dateOnly event’s start as stored when a save names neither it nor a new location, even after the location is deleted', async () => {
      const tokyo = await fixtures(service).venue({ timeZone: 'Asia/Tokyo' });
      const created = await create({
        startTime: '2027-06-15T03:00:00Z',
        dateOnly: true,
        locationId: tokyo.locationIds[0],
      });
      const id = created.body.data.id as string;
      const deleted = await admin('DELETE', `/internal/venues/${tokyo.id}/locations/${tokyo.locationIds[0]}`);
      assert.equal(deleted.status, 200, deleted.text);
      const renamed = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { title: { en: 'Renamed' } },
      });
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.body.data.startTime, '2027-06-15T03:00:00.000Z');
    });

    it('deduplicates additionalLocationIds in order, drops the primary and caps at 8', async () => {
      const ids = ['a', 'b', 'a', venue.locationIds[0], 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
      const created = await create({
        startTime: '2027-07-11T10:00:00Z',
        locationId: venue.locationIds[0],
        additionalLocationIds: ids,
      });
      const row = (await db.query('SELECT additional_location_ids FROM event WHERE id = $1', [created.body.data.id]))
        .rows[0];
      assert.deepEqual(row.additional_location_ids, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    });

    it('refuses a locationId that names no location', async () => {
      assertErrorBody(
        await create({ startTime: '2027-07-11T10:00:00Z', locationId: 'loc_nope' }),
        400,
        'invalid_argument',
      );
    });

    it('validates planning and clears it with null', async () => {
      assertErrorBody(
        await create({ startTime: '2027-07-12T10:00:00Z', planning: { date: { mode: 'window', from: '2027-08-01' } } }),
        400,
        'invalid_argument',
      );
      const created = await create({
        startTime: '2027-07-12T10:00:00Z',
        planning: { date: { mode: 'options', options: [{ id: 'o1', start: '2027-08-01' }] } },
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id;
      const cleared = await api('PATCH', `/v1/events/${id}`, { key: organiser.key, body: { planning: null } });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal((await db.query('SELECT planning FROM event WHERE id = $1', [id])).rows[0].planning, null);
    });

    it('refuses an onlineMeeting url off the provider hosts and never stores it; null clears', async () => {
      const refused = await create({
        startTime: '2027-07-13T10:00:00Z',
        onlineMeeting: { provider: 'zoom', url: 'https://zoom.us.evil.example/j/1' },
      });
      assertErrorBody(refused, 400, 'invalid_argument');
      const created = await create({
        startTime: '2027-07-13T10:00:00Z',
        onlineMeeting: { provider: 'zoom', url: 'https://us02web.zoom.us/j/123' },
      });
      const id = created.body.data.id;
      const patched = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { onlineMeeting: { provider: 'google_meet', url: 'https://meet.google.com.evil.example/x' } },
      });
      assertErrorBody(patched, 400, 'invalid_argument');
      assert.equal(
        (await db.query('SELECT online_meeting FROM event WHERE id = $1', [id])).rows[0].online_meeting.url,
        'https://us02web.zoom.us/j/123',
      );
      await api('PATCH', `/v1/events/${id}`, { key: organiser.key, body: { onlineMeeting: null } });
      assert.equal(
        (await db.query('SELECT online_meeting FROM event WHERE id = $1', [id])).rows[0].online_meeting,
        null,
      );
    });

    it('creates a refund offer when refundOfferOnChange accompanies a date move, and never stores the flag', async () => {
      const created = await create({ startTime: '2027-07-14T10:00:00Z' });
      const id = created.body.data.id;
      await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { title: { en: 'x' }, refundOfferOnChange: true },
      });
      assert.equal((await db.query('SELECT refund_offer FROM event WHERE id = $1', [id])).rows[0].refund_offer, null);
      await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { startTime: '2027-07-15T10:00:00Z', refundOfferOnChange: true },
      });
      const offer = (await db.query('SELECT refund_offer FROM event WHERE id = $1', [id])).rows[0].refund_offer;
      assert.equal(offer.previousStartTime, '2027-07-14T10:00:00.000Z');
    });

    it('forbids visibility other than draft or unlisted on create and update, writing nothing', async () => {
      const before = await countEvents(organiser.id);
      assertErrorBody(await create({ startTime: '2027-07-16T10:00:00Z', visibility: 'public' }), 403, 'forbidden');
      assertErrorBody(await create({ startTime: '2027-07-16T10:00:00Z', visibility: 'cancelled' }), 403, 'forbidden');
      assert.equal(await countEvents(organiser.id), before);
      const created = await create({ startTime: '2027-07-16T10:00:00Z', title: { en: 'Before' } });
      const id = created.body.data.id;
      assertErrorBody(
        await api('PATCH', `/v1/events/${id}`, {
          key: organiser.key,
          body: { visibility: 'public', title: { en: 'After' } },
        }),
        403,
        'forbidden',
      );
      assert.deepEqual((await db.query('SELECT title, visibility FROM event WHERE id = $1', [id])).rows[0], {
        title: { EN: 'Before' },
        visibility: null,
      });
    });

    it('moves draft to unlisted one way: an unlisted event never returns to draft', async () => {
      const created = await create({ startTime: '2027-07-17T10:00:00Z', visibility: 'draft' });
      const id = created.body.data.id;
      const unlisted = await api('PATCH', `/v1/events/${id}`, { key: organiser.key, body: { visibility: 'unlisted' } });
      assert.equal(unlisted.body.data.visibility, 'unlisted');
      assertErrorBody(
        await api('PATCH', `/v1/events/${id}`, { key: organiser.key, body: { visibility: 'draft' } }),
        403,
        'forbidden',
      );
    });

    it('answers a PATCH with no writable fields with 400 invalid_argument', async () => {
      const created = await create({ startTime: '2027-07-18T10:00:00Z' });
      const result = await api('PATCH', `/v1/events/${created.body.data.id}`, {
        key: organiser.key,
        body: { id: 'x', unknown: 1 },
      });
      assertErrorBody(result, 400, 'invalid_argument');
      assert.match(result.body.message, /no writable fields/);
    });

    it('answers a PATCH without a body as one with no writable fields: the same 400 and message as for {}', async () => {
      const created = await create({ startTime: '2027-07-19T10:00:00Z' });
      const path = `/v1/events/${created.body.data.id}`;
      const empty = await api('PATCH', path, { key: organiser.key, body: {} });
      const absent = await api('PATCH', path, { key: organiser.key });
      assertErrorBody(absent, 400, 'invalid_argument');
      assert.equal(absent.body.message, empty.body.message);
      assert.match(absent.body.message, /no writable fields were given/);
    });
  });

  describe('idempotency', () => {
    it('requires an Idempotency-Key on POST /v1/events', async () => {
      const result = await api('POST', '/v1/events', {
        key: organiser.key,
        body: { startTime: '2027-08-01T10:00:00Z' },
      });
      assertErrorBody(result, 400, 'idempotency_key_required');
    });

    it('replays a succeeded key unchanged and creates nothing', async () => {
      const key = randomUUID();
      const first = await create({ startTime: '2027-08-02T10:00:00Z', title: { en: 'Once' } }, organiser.key, key);
      const before = await countEvents(organiser.id);
      const second = await create({ startTime: '2027-08-02T10:00:00Z', title: { en: 'Once' } }, organiser.key, key);
      assert.equal(second.status, 201);
      assert.equal(second.text, first.text);
      assert.equal(second.headers.get('etag'), first.headers.get('etag'));
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(first.headers.get('idempotent-replayed'), null);
      assert.equal(await countEvents(organiser.id), before);
    });

    it('treats a key whose earlier attempt failed as new', async () => {
      const key = randomUUID();
      assertErrorBody(await create({ title: { en: 'no start' } }, organiser.key, key), 400, 'invalid_argument');
      const retried = await create({ startTime: '2027-08-03T10:00:00Z' }, organiser.key, key);
      assert.equal(retried.status, 201, retried.text);
      assert.equal(retried.headers.get('idempotent-replayed'), null);
    });

    it('scopes keys per organiser', async () => {
      const key = randomUUID();
      const mine = await create({ startTime: '2027-08-04T10:00:00Z' }, organiser.key, key);
      const theirs = await create({ startTime: '2027-08-04T10:00:00Z' }, other.key, key);
      assert.notEqual(mine.body.data.id, theirs.body.data.id);
    });

    it('bounds only the wait for a concurrent request with the same key: a first request waiting over 5 s for another lock still creates', async () => {
      // Another write holds the organiser's row past the key's 5 s wait: the event's foreign key check waits for it.
      const holder = await databaseClient(service.databaseUrl);
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM organiser WHERE id = $1 FOR UPDATE', [other.id]);
        const creating = create({ startTime: '2027-08-05T10:00:00Z' }, other.key);
        await new Promise((resolve) => setTimeout(resolve, 5_500));
        await holder.query('COMMIT');
        const created = await creating;
        assert.equal(created.status, 201, created.text);
        assert.equal(created.headers.get('idempotent-replayed'), null);
      } finally {
        await holder.end();
      }
    });

    it('creates exactly one event from concurrent requests with one key', async () => {
      const key = randomUUID();
      const before = await countEvents(organiser.id);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => create({ startTime: '2027-08-05T10:00:00Z' }, organiser.key, key)),
      );
      assert.ok(results.every((result) => result.status === 201));
      assert.equal(new Set(results.map((result) => result.body.data.id)).size, 1);
      assert.equal(await countEvents(organiser.id), before + 1);
    });

    it('keeps a key 7 days: one made 6 days ago still replays, one made 8 days ago is new again', async () => {
      const madeDaysAgo = async (days: number) => {
        const key = randomUUID();
        const first = await create({ startTime: '2027-08-07T10:00:00Z' }, organiser.key, key);
        assert.equal(first.status, 201, first.text);
        const aged = await db.query(
          `UPDATE idempotency_key SET created_at = now() - make_interval(days => $3) WHERE organizer_id = $1 AND key = $2`,
          [organiser.id, key, days],
        );
        assert.equal(aged.rowCount, 1);
        return { key, first };
      };
      const sixDays = await madeDaysAgo(6);
      const kept = await create({ startTime: '2027-08-07T10:00:00Z' }, organiser.key, sixDays.key);
      assert.equal(kept.headers.get('idempotent-replayed'), 'true', 'a key made 6 days ago still replays');
      assert.equal(kept.body.data.id, sixDays.first.body.data.id);

      const eightDays = await madeDaysAgo(8);
      const before = await countEvents(organiser.id);
      const renewed = await create({ startTime: '2027-08-07T10:00:00Z' }, organiser.key, eightDays.key);
      assert.equal(renewed.status, 201, renewed.text);
      assert.equal(renewed.headers.get('idempotent-replayed'), null, 'a key made 8 days ago is new again');
      assert.notEqual(renewed.body.data.id, eightDays.first.body.data.id);
      assert.equal(await countEvents(organiser.id), before + 1);
    });

    it('purges keys older than 7 days, after which the key is new again', async () => {
      const key = randomUUID();
      const first = await create({ startTime: '2027-08-06T10:00:00Z' }, organiser.key, key);
      await db.query(`UPDATE idempotency_key SET created_at = now() - interval '8 days' WHERE key = $1`, [key]);
      const purged = await service.running.app.get(IdempotencyService).purgeExpired();
      assert.ok(purged >= 1);
      const again = await create({ startTime: '2027-08-06T10:00:00Z' }, organiser.key, key);
      assert.notEqual(again.body.data.id, first.body.data.id);
    });
  });

  describe('ETag and If-Match', () => {
    it('returns a strong ETag that stays while nothing visible changes and answers If-None-Match with 304', async () => {
      const created = await create({ startTime: '2027-09-01T10:00:00Z' });
      const id = created.body.data.id;
      const first = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      const second = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      const etag = first.headers.get('etag');
      assert.match(etag ?? '', /^"[^"]+"$/);
      assert.equal(second.headers.get('etag'), etag);
      assert.equal(created.headers.get('etag'), etag);
      const notModified = await api('GET', `/v1/events/${id}`, {
        key: organiser.key,
        headers: { 'if-none-match': etag! },
      });
      assert.equal(notModified.status, 304);
      assert.equal(notModified.text, '');
      await admin('POST', `/internal/events/${id}/touch`);
      const touched = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      assert.notEqual(touched.headers.get('etag'), etag);
    });

    it('answers a HEAD with If-None-Match as the GET: 304 with the ETag and no Content-Length or Content-Type', async () => {
      const created = await create({ startTime: '2027-09-03T10:00:00Z' });
      const etag = created.headers.get('etag')!;
      for (const method of ['GET', 'HEAD']) {
        const answer = await api(method, `/v1/events/${created.body.data.id}`, {
          key: organiser.key,
          headers: { 'if-none-match': etag },
        });
        assert.equal(answer.status, 304, method);
        assert.equal(answer.headers.get('etag'), etag, method);
        assert.equal(answer.headers.get('content-length'), null, method);
        assert.equal(answer.headers.get('content-type'), null, method);
      }
    });

    it('compares If-None-Match weakly (W/ of the ETag answers 304) and If-Match strongly (W/ of it is 412)', async () => {
      const created = await create({ startTime: '2027-09-02T10:00:00Z' });
      const id = created.body.data.id as string;
      const etag = created.headers.get('etag')!;
      const weakly = await api('GET', `/v1/events/${id}`, {
        key: organiser.key,
        headers: { 'if-none-match': `"other", W/${etag}` },
      });
      assert.equal(weakly.status, 304);
      // RFC 9110: a 304's Content-Length, if sent, is the 200's; it sends no representation metadata of its own.
      const length = weakly.headers.get('content-length');
      assert.ok(length === null || length === String(Buffer.byteLength(created.text)), `content-length ${length}`);
      assert.equal(weakly.headers.get('content-type'), null);
      assert.equal(weakly.headers.get('etag'), etag);
      const other = await api('GET', `/v1/events/${id}`, {
        key: organiser.key,
        headers: { 'if-none-match': 'W/"other"' },
      });
      assert.equal(other.status, 200);
      const weakIfMatch = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { tags: ['weak'] },
        headers: { 'if-match': `W/${etag}` },
      });
      assertErrorBody(weakIfMatch, 412, 'precondition_failed');
    });

    it('computes the ETag over the exact bytes of the body it is sent with, as JSON, on GET and PATCH', async () => {
      const created = await create({ startTime: '2027-09-04T10:00:00Z', title: { en: 'Bytes' } });
      const id = created.body.data.id;
      const read = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      const written = await api('PATCH', `/v1/events/${id}`, { key: organiser.key, body: { tags: ['bytes'] } });
      for (const response of [read, written]) {
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(response.headers.get('etag'), `"${hash('sha256', response.text, 'base64url').slice(0, 32)}"`);
        assert.equal(response.text, JSON.stringify({ data: response.body.data }));
      }
    });

    it('refuses a PATCH whose If-Match differs with 412, writing nothing', async () => {
      const created = await create({ startTime: '2027-09-02T10:00:00Z', title: { en: 'Old' } });
      const id = created.body.data.id;
      const result = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { title: { en: 'New' } },
        headers: { 'if-match': '"stale"' },
      });
      assertErrorBody(result, 412, 'precondition_failed');
      assert.deepEqual((await db.query('SELECT title FROM event WHERE id = $1', [id])).rows[0].title, { EN: 'Old' });
    });

    it('accepts If-Match: * on an existing event and answers 404 on a missing one', async () => {
      const created = await create({ startTime: '2027-09-03T10:00:00Z' });
      const ok = await api('PATCH', `/v1/events/${created.body.data.id}`, {
        key: organiser.key,
        body: { tags: ['a'] },
        headers: { 'if-match': '*' },
      });
      assert.equal(ok.status, 200);
      assert.ok(ok.headers.get('etag'));
      assert.notEqual(ok.headers.get('etag'), created.headers.get('etag'));
      assertErrorBody(
        await api('PATCH', '/v1/events/evt_missing', {
          key: organiser.key,
          body: { tags: ['a'] },
          headers: { 'if-match': '*' },
        }),
        404,
        'not_found',
      );
    });

    it('returns from PATCH the same ETag a following GET returns, so conditional writes can chain', async () => {
      const created = await create({ startTime: '2027-09-05T10:00:00Z', title: { de: 'Eins' } });
      const id = created.body.data.id;
      const patched = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { title: { en: 'One' }, endTime: '2027-09-05T12:00:00+02:00' },
        headers: { 'if-match': created.headers.get('etag')! },
      });
      const read = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      assert.equal(patched.headers.get('etag'), read.headers.get('etag'));
      assert.deepEqual(patched.body, read.body);
      const chained = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { tags: ['x'] },
        headers: { 'if-match': patched.headers.get('etag')! },
      });
      assert.equal(chained.status, 200);
    });

    it('lets exactly one of two concurrent PATCHes holding the same ETag win', async () => {
      const created = await create({ startTime: '2027-09-04T10:00:00Z' });
      const id = created.body.data.id;
      const etag = created.headers.get('etag')!;
      const results = await Promise.all(
        ['One', 'Two', 'Three'].map((title) =>
          api('PATCH', `/v1/events/${id}`, {
            key: organiser.key,
            body: { title: { en: title } },
            headers: { 'if-match': etag },
          }),
        ),
      );
      assert.deepEqual(results.map((result) => result.status).sort(), [200, 412, 412]);
    });
  });

  describe('who sees what', () => {
    let publicAtVenue: string;
    let unlistedPlaceholder: string;
    let unlistedOrphan: string;
    let unlistedActive: string;
    let draftAtVenue: string;
    let publicElsewhere: string;

    before(async () => {
      const placeholder = await fixtures(service).organiser({ placeholder: true });
      const internal = async (body: Record<string, unknown>): Promise<string> => {
        const result = await admin('POST', '/internal/events', {
          body: { startTime: '2027-10-01T10:00:00Z', ...body },
        });
        assert.equal(result.status, 201, result.text);
        return result.body.data.id as string;
      };
      const at = venue.locationIds[1];
      publicAtVenue = await internal({ organizerId: organiser.id, visibility: 'public', locationId: at });
      unlistedPlaceholder = await internal({ organizerId: placeholder.id, visibility: 'unlisted', locationId: at });
      unlistedOrphan = await internal({ organizerId: null, visibility: 'unlisted', locationId: at });
      unlistedActive = await internal({ organizerId: organiser.id, visibility: 'unlisted', locationId: at });
      draftAtVenue = await internal({ organizerId: organiser.id, locationId: at });
      const elsewhere = await fixtures(service).venue();
      publicElsewhere = await internal({
        organizerId: organiser.id,
        visibility: 'public',
        locationId: elsewhere.locationIds[0],
      });
    });

    it('answers another organiser’s event with 404, never 403', async () => {
      const created = await create({ startTime: '2027-10-02T10:00:00Z' });
      assertErrorBody(await api('GET', `/v1/events/${created.body.data.id}`, { key: other.key }), 404, 'not_found');
      assertErrorBody(
        await api('PATCH', `/v1/events/${created.body.data.id}`, { key: other.key, body: { tags: [] } }),
        404,
        'not_found',
      );
    });

    it('shows a venue key public events and unlisted events of placeholder or no organiser at its address, nothing else', async () => {
      const list = await api('GET', '/v1/events?limit=100', { key: venue.key });
      const ids = new Set(list.body.data.map((event: { id: string }) => event.id));
      assert.ok(ids.has(publicAtVenue));
      assert.ok(ids.has(unlistedPlaceholder));
      assert.ok(ids.has(unlistedOrphan));
      assert.ok(!ids.has(unlistedActive));
      assert.ok(!ids.has(draftAtVenue));
      assert.ok(!ids.has(publicElsewhere));
    });

    it('applies the venue rule to GET /v1/events/{id} as well', async () => {
      assert.equal((await api('GET', `/v1/events/${publicAtVenue}`, { key: venue.key })).status, 200);
      assert.equal((await api('GET', `/v1/events/${unlistedOrphan}`, { key: venue.key })).status, 200);
      assertErrorBody(await api('GET', `/v1/events/${unlistedActive}`, { key: venue.key }), 404, 'not_found');
      assertErrorBody(await api('GET', `/v1/events/${draftAtVenue}`, { key: venue.key }), 404, 'not_found');
    });

    it('refuses writes by a venue key with 403 insufficient_scope', async () => {
      assertErrorBody(await create({ startTime: '2027-10-03T10:00:00Z' }, venue.key), 403, 'insufficient_scope');
    });

    it('refuses a key without events:write with 403 insufficient_scope', async () => {
      const reader = await fixtures(service).key({ type: 'organiser', id: organiser.id }, ['events:read']);
      assertErrorBody(await create({ startTime: '2027-10-03T10:00:00Z' }, reader), 403, 'insufficient_scope');
    });
  });

  describe('publishing', () => {
    it('emits event.published the first time only, also when publishes race', async () => {
      const created = await create({ startTime: '2027-11-01T10:00:00Z' });
      const id = created.body.data.id;
      published = [];
      const results = await Promise.all(
        Array.from({ length: 4 }, () => admin('POST', `/internal/events/${id}/publish`)),
      );
      assert.ok(results.every((result) => result.status === 200 && result.body.data.visibility === 'public'));
      await admin('POST', `/internal/events/${id}/publish`);
      assert.deepEqual(
        published.filter((eventId) => eventId === id),
        [id],
      );
    });

    it('refuses to publish while planning.date.mode is not fixed, with 409 conflict', async () => {
      const created = await create({
        startTime: '2027-11-02T10:00:00Z',
        planning: { date: { mode: 'window', from: '2027-11-01', to: '2027-11-30' } },
      });
      assertErrorBody(await admin('POST', `/internal/events/${created.body.data.id}/publish`), 409, 'conflict');
    });

    it("refuses a PATCH that would make a public event's date a placeholder (planning.date.mode not fixed), 400 and nothing written", async () => {
      const created = await create({ startTime: '2027-11-05T10:00:00Z' });
      const id = created.body.data.id;
      assert.equal((await admin('POST', `/internal/events/${id}/publish`)).status, 200);
      const before = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      for (const planning of [
        { date: { mode: 'window', from: '2027-11-01', to: '2027-11-30' } },
        {
          date: {
            mode: 'options',
            options: [{ id: 'a', start: '2027-11-06T10:00:00Z', end: null, allDay: false, note: null }],
          },
        },
      ]) {
        assertErrorBody(
          await api('PATCH', `/v1/events/${id}`, { key: organiser.key, body: { planning } }),
          400,
          'invalid_argument',
        );
      }
      const after = await api('GET', `/v1/events/${id}`, { key: organiser.key });
      assert.equal(after.headers.get('etag'), before.headers.get('etag'), 'nothing was written');
      // A fixed date, or other fields, are still written to a public event.
      const fixed = await api('PATCH', `/v1/events/${id}`, {
        key: organiser.key,
        body: { planning: { date: { mode: 'fixed' } }, title: { en: 'Still public' } },
      });
      assert.equal(fixed.status, 200);
    });

    it('touch moves only updatedAt', async () => {
      const created = await create({ startTime: '2027-11-03T10:00:00Z', title: { en: 'Same' } });
      const touched = await admin('POST', `/internal/events/${created.body.data.id}/touch`);
      assert.equal(touched.status, 200);
      assert.ok(touched.body.data.updatedAt > created.body.data.updatedAt);
      assert.deepEqual({ ...touched.body.data, updatedAt: null }, { ...created.body.data, updatedAt: null });
    });

    it('hard-deletes an event through the internal API', async () => {
      const created = await create({ startTime: '2027-11-04T10:00:00Z' });
      const deleted = await admin('DELETE', `/internal/events/${created.body.data.id}`);
      assert.deepEqual(deleted.body.data, { id: created.body.data.id, deleted: true });
      assertErrorBody(await api('GET', `/v1/events/${created.body.data.id}`, { key: organiser.key }), 404, 'not_found');
    });
  });
});
