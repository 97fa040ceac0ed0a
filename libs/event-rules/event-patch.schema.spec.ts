import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EVENT_PATCH_FIELDS, parseEventPatch } from './event-patch';
import { EVENT_PATCH_COMPONENTS, EVENT_PATCH_SCHEMA } from './event-patch.schema';

function schemaValidator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const $defs = JSON.parse(JSON.stringify(EVENT_PATCH_COMPONENTS).replaceAll('#/components/schemas/', '#/$defs/'));
  return ajv.compile({ $ref: '#/$defs/EventPatch', $defs });
}

const validate = schemaValidator();
const START = '2027-05-01T19:00:00Z';

/** Bodies the validator accepts; the schema must accept each. */
const ACCEPTED: Array<Record<string, unknown>> = [
  { startTime: START },
  { startTime: 1809198000000, endTime: '2027-05-01T23:00:00+02:00' },
  { title: { en: 'Jazz', 'de-DE': 'Jazz' }, description: { EN: 'Live' }, visibility: 'unlisted' },
  { planning: null, onlineMeeting: null },
  {
    planning: {
      date: { mode: 'options', options: [{ id: 'a', start: '2027-05-01', end: null, allDay: true, note: null }] },
      place: { mode: 'area', city: 'Berlin' },
    },
  },
  { planning: { date: { mode: 'window', from: '2027-05-01', to: '2027-05-10', note: 'spring' } } },
  { onlineMeeting: { provider: 'zoom', url: 'https://us02web.zoom.us/j/123', label: 'Room' } },
  { tags: ['a'], subtags: [], languages: ['en'], metadata: { a: [1, { b: null }] }, links: [{ href: 'x' }] },
  { dateOnly: true, hideLocation: false, hideRelatedEvents: true, titleFontScale: 1.5, seriesId: 's1' },
  { locationId: 'loc_1', additionalLocationIds: ['loc_2', 'loc_2'], imageBlobName: 'a.png', imageBlobNames: ['b.png'] },
  { themeColor: '#fff', backgroundParams: {}, plasmaPreset: {}, groupSizeOverride: {}, refundOfferOnChange: true },
];

/** One wrong-typed field each; the validator refuses each, and so must the schema. */
const REFUSED: Array<Record<string, unknown>> = [
  { title: 'Jazz' },
  { title: { en: 5 } },
  { startTime: true },
  { dateOnly: 'yes' },
  { locationId: '' },
  { additionalLocationIds: 'loc_1' },
  { planning: { date: { mode: 'someday' } } },
  { onlineMeeting: { provider: 'skype', url: 'https://skype.com/x' } },
  { tags: [1] },
  { metadata: [] },
  { visibility: 'public' },
  { titleFontScale: 0 },
  { hideLocation: 1 },
  { links: ['https://example.com'] },
  { refundOfferOnChange: 'true' },
];

describe('the EventPatch schema of the OpenAPI document', () => {
  it('documents every writable field of the validator, in the validator’s order', () => {
    assert.deepEqual(Object.keys(EVENT_PATCH_SCHEMA['properties'] as object), [...EVENT_PATCH_FIELDS]);
  });

  it('accepts the bodies the validator accepts', () => {
    for (const body of ACCEPTED) {
      const parsed = parseEventPatch(body, 'update');
      assert.ok(parsed.ok, `validator accepts ${JSON.stringify(body)}`);
      assert.ok(validate(body), `schema accepts ${JSON.stringify(body)}: ${JSON.stringify(validate.errors)}`);
    }
  });

  it('refuses the wrong-typed values the validator refuses', () => {
    for (const body of REFUSED) {
      assert.equal(
        parseEventPatch({ startTime: START, ...body }, 'update').ok,
        false,
        `validator refuses ${JSON.stringify(body)}`,
      );
      assert.equal(validate({ startTime: START, ...body }), false, `schema refuses ${JSON.stringify(body)}`);
    }
  });
});
