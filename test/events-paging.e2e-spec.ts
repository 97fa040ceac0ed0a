import fc from 'fast-check';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { nth } from './support/defined';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

interface Row {
  id: string;
  start: number | null;
  updated: number;
}

const BASE = Date.UTC(2027, 0, 1);

/** Bulk fixtures straight into the table: paging is about reading, and this keeps the test fast. */
async function insertEvents(db: Client, organizerId: string, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO event (id, organizer_id, start_time, updated_at, created_at)
     SELECT id, $1, to_timestamp(s / 1000.0), to_timestamp(u / 1000.0), now()
       FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS t(id, s, u)`,
    [organizerId, rows.map((r) => r.id), rows.map((r) => r.start), rows.map((r) => r.updated)],
  );
}

function newRow(start: number | null, updated: number): Row {
  return { id: `evt_${randomBytes(12).toString('hex')}`, start, updated };
}

const byStartDesc = (a: Row, b: Row): number => (b.start ?? 0) - (a.start ?? 0) || (a.id < b.id ? 1 : -1);
const byUpdatedAsc = (a: Row, b: Row): number => a.updated - b.updated || (a.id < b.id ? -1 : 1);

describe('paging rules (events list)', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let db: Client;

  const walk = async (key: string, query: string, limit: number, between?: () => Promise<void>) => {
    const seen: Array<{ id: string; startTime: string; updatedAt: string }> = [];
    let cursor: string | null = null;
    for (let page = 0; page < 500; page += 1) {
      const params = new URLSearchParams(query);
      params.set('limit', String(limit));
      if (cursor !== null) params.set('cursor', cursor);
      const result = await api('GET', `/v1/events?${params.toString()}`, { key });
      assert.equal(result.status, 200, result.text);
      assert.ok(result.body.data.length <= limit);
      assert.equal(result.body.next_cursor === null, !result.body.has_more);
      seen.push(...result.body.data);
      if (!result.body.has_more) return seen;
      cursor = result.body.next_cursor;
      await between?.();
    }
    throw new Error('paging did not end');
  };

  const app = withApp({ RATE_LIMIT_READS: '100000' });
  before(() => {
    ({ service, api, db } = app);
  });

  describe('limit', () => {
    let organiser: Organiser;
    before(async () => {
      organiser = await fixtures(service).organiser();
      await insertEvents(
        db,
        organiser.id,
        Array.from({ length: 120 }, (_, i) => newRow(BASE + i * 60_000, BASE + i)),
      );
    });

    it('clamps a limit above 100 to 100', async () => {
      const result = await api('GET', '/v1/events?limit=500', { key: organiser.key });
      assert.equal(result.body.data.length, 100);
      assert.equal(result.body.has_more, true);
    });

    it('turns a missing, non-numeric, zero or negative limit into 50 without an error', async () => {
      for (const query of ['', '?limit=', '?limit=abc', '?limit=0', '?limit=-5', '?limit=1.5e3x']) {
        const result = await api('GET', `/v1/events${query}`, { key: organiser.key });
        assert.equal(result.status, 200, query);
        assert.equal(result.body.data.length, 50, query);
      }
    });
  });

  describe('has_more and next_cursor', () => {
    let organiser: Organiser;
    before(async () => {
      organiser = await fixtures(service).organiser();
      await insertEvents(
        db,
        organiser.id,
        Array.from({ length: 10 }, (_, i) => newRow(BASE + i * 1000, BASE + i)),
      );
    });

    it('reports has_more false on a full last page, because it is observed, not inferred', async () => {
      const result = await api('GET', '/v1/events?limit=10', { key: organiser.key });
      assert.equal(result.body.data.length, 10);
      assert.equal(result.body.has_more, false);
      assert.equal(result.body.next_cursor, null);
    });

    it('gives a next_cursor exactly when has_more is true', async () => {
      const first = await api('GET', '/v1/events?limit=6', { key: organiser.key });
      assert.equal(first.body.has_more, true);
      assert.equal(typeof first.body.next_cursor, 'string');
      const second = await api('GET', `/v1/events?limit=6&cursor=${encodeURIComponent(first.body.next_cursor)}`, {
        key: organiser.key,
      });
      assert.equal(second.body.data.length, 4);
      assert.equal(second.body.has_more, false);
      assert.equal(second.body.next_cursor, null);
    });

    it('never returns events without a stored startTime', async () => {
      const row = newRow(null, BASE);
      await insertEvents(db, organiser.id, [row]);
      const ids = (await walk(organiser.key, '', 100)).map((event) => event.id);
      assert.ok(!ids.includes(row.id));
      const since = (await walk(organiser.key, `updated_after=${BASE - 1000}`, 100)).map((event) => event.id);
      assert.ok(!since.includes(row.id));
    });
  });

  describe('cursor', () => {
    let organiser: Organiser;
    let rows: Row[];
    before(async () => {
      organiser = await fixtures(service).organiser();
      rows = Array.from({ length: 6 }, (_, i) => newRow(BASE + i * 1000, BASE + i));
      await insertEvents(db, organiser.id, rows);
    });

    const firstCursor = async (query = ''): Promise<string> =>
      (await api('GET', `/v1/events?limit=2${query}`, { key: organiser.key })).body.next_cursor as string;

    it('refuses a malformed cursor with 400 invalid_cursor', async () => {
      for (const cursor of ['abc', 'not.a.cursor', '', '%00']) {
        assertErrorBody(await api('GET', `/v1/events?cursor=${cursor}`, { key: organiser.key }), 400, 'invalid_cursor');
      }
    });

    it('refuses a tampered cursor with 400 invalid_cursor', async () => {
      const cursor = await firstCursor();
      const [payload = '', tag] = cursor.split('.');
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as string[];
      decoded[1] = '2000-01-01T00:00:00.000Z';
      const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${tag}`;
      assertErrorBody(await api('GET', `/v1/events?cursor=${forged}`, { key: organiser.key }), 400, 'invalid_cursor');
    });

    it('refuses a cursor from a different ordering (updated_after added or removed)', async () => {
      const plain = await firstCursor();
      assertErrorBody(
        await api('GET', `/v1/events?updated_after=${BASE}&cursor=${plain}`, { key: organiser.key }),
        400,
        'invalid_cursor',
      );
      const since = await firstCursor(`&updated_after=${BASE}`);
      assertErrorBody(await api('GET', `/v1/events?cursor=${since}`, { key: organiser.key }), 400, 'invalid_cursor');
    });

    it('refuses a cursor whose anchor row no longer exists', async () => {
      const result = await api('GET', '/v1/events?limit=2', { key: organiser.key });
      const anchor = result.body.data[1].id as string;
      await internalApi(service)('DELETE', `/internal/events/${anchor}`);
      assertErrorBody(
        await api('GET', `/v1/events?limit=2&cursor=${encodeURIComponent(result.body.next_cursor)}`, {
          key: organiser.key,
        }),
        400,
        'invalid_cursor',
      );
    });
  });

  describe('updated_after', () => {
    let organiser: Organiser;
    let rows: Row[];
    before(async () => {
      organiser = await fixtures(service).organiser();
      rows = Array.from({ length: 8 }, (_, i) => newRow(BASE + (8 - i) * 1000, BASE + i * 1000));
      await insertEvents(db, organiser.id, rows);
    });

    it('returns rows at or after the instant, updatedAt ascending, as ISO 8601 or epoch ms', async () => {
      const instant = BASE + 3000;
      for (const value of [String(instant), new Date(instant).toISOString(), '2027-01-01T01:00:03+01:00']) {
        const result = await api('GET', `/v1/events?updated_after=${encodeURIComponent(value)}`, {
          key: organiser.key,
        });
        assert.equal(result.status, 200, value);
        assert.deepEqual(
          result.body.data.map((event: { id: string }) => event.id),
          rows.slice(3).map((row) => row.id),
          value,
        );
      }
    });

    it('keeps “at or after” for an updated_after finer than milliseconds: a row a fraction of a millisecond before it is not returned', async () => {
      const finer = `${new Date(BASE + 3000).toISOString().slice(0, -1)}4Z`;
      const result = await api('GET', `/v1/events?updated_after=${encodeURIComponent(finer)}`, { key: organiser.key });
      assert.equal(result.status, 200, finer);
      assert.deepEqual(
        result.body.data.map((event: { id: string }) => event.id),
        rows.slice(4).map((row) => row.id),
      );
    });

    it('refuses an unparseable updated_after with 400 invalid_argument', async () => {
      for (const value of ['yesterday', '2027-13-01', '12:00']) {
        assertErrorBody(
          await api('GET', `/v1/events?updated_after=${value}`, { key: organiser.key }),
          400,
          'invalid_argument',
        );
      }
    });
  });

  it('pages a venue key exactly across its visibility filter: every event it may see once, in order, none it may not, however the hidden ones fall between pages', async () => {
    const make = fixtures(service);
    const active = await make.organiser();
    const placeholder = await make.organiser({ placeholder: true });
    const venue = await make.venue();
    const elsewhere = await make.venue();
    const kinds = [
      { organizerId: active.id, visibility: 'public', seen: true },
      { organizerId: placeholder.id, visibility: 'unlisted', seen: true },
      { organizerId: null, visibility: 'unlisted', seen: true },
      { organizerId: active.id, visibility: 'unlisted', seen: false },
      { organizerId: active.id, visibility: null, seen: false },
    ] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: kinds.length - 1 }), fc.boolean(), fc.integer({ min: 0, max: 3 })),
          {
            maxLength: 30,
          },
        ),
        fc.integer({ min: 1, max: 7 }),
        async (picks, limit) => {
          // Each run on a location of its own, so the runs' events never meet in one list.
          const added = await internalApi(service)('POST', `/internal/venues/${venue.id}/locations`, {
            body: { displayName: 'Stage', timeZone: 'Europe/Berlin' },
          });
          assert.equal(added.status, 201, added.text);
          const here = added.body.data.id as string;
          const rows = picks.map(([kind, atVenue, tick]) => ({
            ...newRow(BASE + tick * 1000, BASE),
            ...nth(kinds, kind, 'event kinds'),
            locationId: atVenue ? here : (elsewhere.locationIds[0] ?? ''),
          }));
          await db.query(
            `INSERT INTO event (id, organizer_id, location_id, visibility, start_time, updated_at, created_at)
             SELECT id, o, l, v, to_timestamp(s / 1000.0), to_timestamp(u / 1000.0), now()
               FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[]) AS t(id, o, l, v, s, u)`,
            [
              rows.map((r) => r.id),
              rows.map((r) => r.organizerId),
              rows.map((r) => r.locationId),
              rows.map((r) => r.visibility),
              rows.map((r) => r.start),
              rows.map((r) => r.updated),
            ],
          );
          const expected = rows
            .filter((row) => row.seen && row.locationId === here)
            .sort(byStartDesc)
            .map((row) => row.id);
          const seen = (await walk(venue.key, '', limit)).map((event) => event.id);
          const others = new Set(rows.map((row) => row.id));
          assert.deepEqual(
            seen.filter((id) => others.has(id)),
            expected,
          );
        },
      ),
      { numRuns: 15 },
    );
  });

  it('walks every page of a random visible set exactly once, in order, for both orderings, also when rows arrive between pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 45 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 6 }),
        async (size, limit, sinceOrdering, insertBetween, distinctTimes) => {
          const organiser = await fixtures(service).organiser();
          // Few distinct times, so ties on the ordering column are common and the id tie-breaker matters.
          const time = (i: number): number => BASE + (i % distinctTimes) * 1000;
          const rows = Array.from({ length: size }, (_, i) => newRow(time(i * 7), time(i * 3)));
          await insertEvents(db, organiser.id, rows);
          await insertEvents(db, organiser.id, [newRow(null, BASE)]);
          const visible = rows.filter((row) => row.start !== null);
          const query = sinceOrdering ? `updated_after=${BASE}` : '';
          const between = insertBetween
            ? () => insertEvents(db, organiser.id, [newRow(time(size + 1), time(size + 2) + 500)])
            : undefined;
          const seen = await walk(organiser.key, query, limit, between);
          const ids = seen.map((event) => event.id);
          assert.equal(new Set(ids).size, ids.length, 'no event twice');
          const expected = [...visible].sort(sinceOrdering ? byUpdatedAsc : byStartDesc).map((row) => row.id);
          if (insertBetween) {
            assert.deepEqual(
              ids.filter((id) => expected.includes(id)),
              expected,
              'every original event once, in order',
            );
            const key = (event: { startTime: string; updatedAt: string; id: string }) =>
              sinceOrdering ? `${event.updatedAt}|${event.id}` : `${event.startTime}|${event.id}`;
            const keys = seen.map(key);
            const sorted = [...keys].sort();
            assert.deepEqual(keys, sinceOrdering ? sorted : sorted.reverse(), 'pages stay in order');
          } else {
            assert.deepEqual(ids, expected);
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});
