import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { DIRECTLY_STORED_FIELDS, parseEventPatch, type DirectlyStoredField } from '../libs/event-rules';
import { EventEntity } from '../src/events/entities/event.entity';
import type { Organiser, Venue } from './support/fixtures';
import { withApp } from './support/with-app';
import { nth } from './support/defined';

/**
 * A valid value for every field stored as given. The type has no optional
 * members, so a new EventPatch field does not compile here until it has a
 * sample, and then this spec proves it is stored.
 */
function samples(locationId: string): Record<DirectlyStoredField, unknown> {
  return {
    title: { en: 'Round trip', de: 'Rundreise' },
    description: { EN: 'Every field, stored' },
    dateOnly: false,
    locationId,
    planning: { date: { mode: 'fixed' } },
    onlineMeeting: { provider: 'zoom', url: 'https://us02web.zoom.us/j/123' },
    imageBlobName: 'cover.png',
    imageBlobNames: ['a.png', 'b.png'],
    tags: ['music'],
    subtags: ['jazz'],
    languages: ['en'],
    metadata: { source: 'round-trip', nested: { n: 1 } },
    visibility: 'unlisted',
    themeColor: '#112233',
    secondaryThemeColor: '#445566',
    backgroundStyle: 'plasma',
    colorMode: 'dark',
    backgroundColor: '#000000',
    headingFont: 'Inter',
    titleFontScale: 1.25,
    backgroundPrimaryColor: '#abcdef',
    backgroundParams: { blur: 3 },
    plasmaPreset: { speed: 2 },
    hideLocation: true,
    hideRelatedEvents: true,
    groupSizeOverride: { min: 2 },
    seriesId: 'series_1',
    links: [{ label: 'Site', url: 'https://example.test' }],
  };
}

describe('EventPatch fields are stored', () => {
  const app = withApp();
  let organiser: Organiser;
  let venue: Venue;

  before(async () => {
    organiser = await app.make.organiser({ scopes: ['events:read', 'events:write'] });
    venue = await app.make.venue();
  });

  it('stores every writable field exactly as parsed, on create and on update', async () => {
    const body = samples(nth(venue.locationIds, 0, 'location of the venue'));
    const expected = parseEventPatch(body, 'update');
    assert.ok(expected.ok, 'the samples are valid');
    assert.deepEqual(Object.keys(body).sort(), [...DIRECTLY_STORED_FIELDS].sort());
    const { api } = app;
    const created = await api('POST', '/v1/events', {
      key: organiser.key,
      headers: { 'idempotency-key': 'round-trip' },
      body: { ...body, startTime: '2030-05-01T18:00:00Z' },
    });
    assert.equal(created.status, 201, created.text);
    const blank = await api('POST', '/v1/events', {
      key: organiser.key,
      headers: { 'idempotency-key': 'round-trip-update' },
      body: { title: { EN: 'Blank' }, startTime: '2030-05-01T18:00:00Z' },
    });
    const patched = await api('PATCH', `/v1/events/${blank.body.data.id}`, { key: organiser.key, body });
    assert.equal(patched.status, 200, patched.text);
    const events = app.service.running.app.get(DataSource).getRepository(EventEntity);
    for (const id of [created.body.data.id as string, blank.body.data.id as string]) {
      const stored = (await events.findOneByOrFail({ id })) as unknown as Record<string, unknown>;
      for (const field of DIRECTLY_STORED_FIELDS) {
        assert.deepEqual(stored[field], expected.patch[field], `${field} is stored as given`);
      }
    }
  });
});
