import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CalendarDay } from './date-only';
import {
  EVENT_PATCH_FIELDS,
  EventPatch,
  EventPatchMode,
  MAX_ADDITIONAL_LOCATIONS,
  SERVER_OWNED_EVENT_FIELDS,
  VISIBILITIES,
  hasWritableFields,
  normaliseAdditionalLocationIds,
  parseEventPatch,
} from './event-patch';

const START = '2025-06-01T18:00:00Z';

function accept(body: unknown, mode: EventPatchMode = 'update'): EventPatch {
  const result = parseEventPatch(body, mode);
  if (!result.ok) assert.fail(`expected the patch to be accepted, got ${result.code}: ${result.message}`);
  return result.patch;
}

function reject(body: unknown, mode: EventPatchMode = 'update'): { code: string; message: string } {
  const result = parseEventPatch(body, mode);
  if (result.ok) assert.fail(`expected the patch to be refused, got ${JSON.stringify(result.patch)}`);
  return { code: result.code, message: result.message };
}

function invalidNaming(body: unknown, field: string, mode: EventPatchMode = 'update'): void {
  const { code, message } = reject(body, mode);
  assert.equal(code, 'invalid_argument');
  assert.ok(message.includes(field), `message "${message}" should name ${field}`);
}

void describe('parseEventPatch: body and keys', () => {
  void it('refuses a body that is not a plain object', () => {
    for (const body of [null, undefined, 'title', 42, [], [{ title: { en: 'x' } }], new Date(), new Map()]) {
      assert.equal(reject(body).code, 'invalid_argument');
    }
  });

  void it('accepts a body with a null prototype', () => {
    const body = Object.assign(Object.create(null) as Record<string, unknown>, { hideLocation: true });
    assert.deepEqual(accept(body), { hideLocation: true });
  });

  void it('drops server-owned fields silently', () => {
    const body: Record<string, unknown> = { title: { en: 'Concert' } };
    for (const key of SERVER_OWNED_EVENT_FIELDS) body[key] = key === 'ticketing' ? { price: 1 } : 'client value';
    const patch = accept(body);
    assert.deepEqual(Object.keys(patch), ['title']);
  });

  void it('drops server-owned fields even when their values are malformed', () => {
    const patch = accept({ id: null, createdAt: 'not a date', priority: { x: 1 }, hideLocation: false });
    assert.deepEqual(patch, { hideLocation: false });
  });

  void it('drops unknown keys silently', () => {
    assert.deepEqual(accept({ colour: 'red', foo: { bar: 1 }, tags: ['jazz'] }), { tags: ['jazz'] });
  });

  void it('lists every writable field of the contract table and none of the server-owned ones', () => {
    // Copied from the EventPatch table of api-v1.md, in its order.
    const contractTable = [
      'title',
      'description',
      'startTime',
      'endTime',
      'dateOnly',
      'locationId',
      'additionalLocationIds',
      'planning',
      'onlineMeeting',
      'imageBlobName',
      'imageBlobNames',
      'tags',
      'subtags',
      'languages',
      'metadata',
      'visibility',
      'themeColor',
      'secondaryThemeColor',
      'backgroundStyle',
      'colorMode',
      'backgroundColor',
      'headingFont',
      'titleFontScale',
      'backgroundPrimaryColor',
      'backgroundParams',
      'plasmaPreset',
      'hideLocation',
      'hideRelatedEvents',
      'groupSizeOverride',
      'seriesId',
      'links',
      'refundOfferOnChange',
    ];
    assert.deepEqual([...EVENT_PATCH_FIELDS], contractTable);
    for (const key of SERVER_OWNED_EVENT_FIELDS) assert.ok(!(EVENT_PATCH_FIELDS as readonly string[]).includes(key));
  });

  void it('treats undefined as absent', () => {
    assert.deepEqual(accept({ title: undefined, tags: ['a'] }), { tags: ['a'] });
  });

  void it('names the first failing field in contract-table order', () => {
    invalidNaming({ tags: 5, title: 5 }, 'title');
  });
});

void describe('parseEventPatch: locale maps', () => {
  void it('uppercases locale keys', () => {
    const patch = accept({
      title: { en: 'Hello', 'de-CH': 'Grüezi', pt_BR: 'Olá' },
      description: { fr: 'Bonjour' },
    });
    assert.deepEqual(patch.title, { EN: 'Hello', 'DE-CH': 'Grüezi', PT_BR: 'Olá' });
    assert.deepEqual(patch.description, { FR: 'Bonjour' });
  });

  void it('refuses a title that is not a locale map', () => {
    for (const title of ['Hello', ['Hello'], 3]) {
      const { code, message } = reject({ title });
      assert.equal(code, 'invalid_argument');
      assert.equal(message, 'title must be an object mapping locale codes to strings');
    }
  });

  void it('refuses a locale value that is not a string', () => {
    invalidNaming({ description: { en: 5 } }, 'description');
  });

  void it('refuses malformed locale codes, including __proto__', () => {
    for (const key of ['e', 'english', 'en-', 'en US', '1en', 'en-CH-toolongsubtag', '']) {
      invalidNaming({ title: { [key]: 'x' } }, 'title');
    }
    invalidNaming(JSON.parse('{"title":{"__proto__":"x"}}'), 'title');
  });

  void it('refuses two locale keys that differ only in case', () => {
    invalidNaming({ title: { en: 'a', EN: 'b' } }, 'title');
  });

  void it('refuses more than 50 locales', () => {
    const codes = Array.from(
      { length: 51 },
      (_, i) => `l${String.fromCharCode(97 + (i % 26))}-${String(i).padStart(2, '0')}`,
    );
    const map = (count: number) => Object.fromEntries(codes.slice(0, count).map((code) => [code, 'x']));
    assert.equal(Object.keys(accept({ title: map(50) }).title!).length, 50);
    invalidNaming({ title: map(51) }, 'title');
  });

  void it('refuses a locale value longer than 10,000 characters', () => {
    accept({ title: { en: 'x'.repeat(10_000) } });
    invalidNaming({ title: { en: 'x'.repeat(10_001) } }, 'title');
  });
});

void describe('parseEventPatch: times', () => {
  void it('requires startTime on create', () => {
    const { code, message } = reject({ title: { en: 'x' } }, 'create');
    assert.equal(code, 'invalid_argument');
    assert.match(message, /startTime is required/);
  });

  void it('does not require startTime on update or internal', () => {
    assert.deepEqual(accept({ hideLocation: true }, 'update'), { hideLocation: true });
    assert.deepEqual(accept({ hideLocation: true }, 'internal'), { hideLocation: true });
  });

  void it('parses ISO 8601 strings and epoch milliseconds (a number) into Dates, never a string of digits as milliseconds', () => {
    const expected = Date.UTC(2025, 5, 1, 8, 0, 0);
    assert.equal(accept({ startTime: '2025-06-01T10:00:00+02:00' }).startTime!.getTime(), expected);
    assert.equal(accept({ startTime: expected }).startTime!.getTime(), expected);
    assert.equal(accept({ endTime: expected }).endTime!.getTime(), expected);
    invalidNaming({ endTime: String(expected) }, 'endTime');
  });

  void it('keeps the calendar day of a date given without a time of day, as midnight UTC for an instant', () => {
    const patch = accept({ startTime: '2027-06-15', endTime: ' 2027-06-16 ' });
    assert.ok(patch.startTime instanceof CalendarDay);
    assert.equal(patch.startTime.day, '2027-06-15');
    assert.equal(patch.startTime.toISOString(), '2027-06-15T00:00:00.000Z');
    assert.ok(patch.endTime instanceof CalendarDay);
    assert.equal(patch.endTime.day, '2027-06-16');
    assert.ok(!(accept({ startTime: '2027-06-15T00:00:00Z' }).startTime instanceof CalendarDay));
  });

  void it('refuses an unparseable startTime or endTime, naming the field', () => {
    for (const bad of ['tomorrow', '2025-02-30', 1.5, true, {}, '9'.repeat(100)]) {
      invalidNaming({ startTime: bad }, 'startTime', 'create');
      invalidNaming({ startTime: START, endTime: bad }, 'endTime', 'create');
    }
  });

  void it('refuses an endTime before the startTime of the same patch', () => {
    invalidNaming({ startTime: START, endTime: '2025-06-01T17:59:59Z' }, 'endTime', 'create');
    const patch = accept({ startTime: START, endTime: START }, 'create');
    assert.equal(patch.endTime!.getTime(), patch.startTime!.getTime());
  });
});

void describe('parseEventPatch: visibility', () => {
  void it('forbids cancelled and public through the API', () => {
    for (const mode of ['create', 'update'] as const) {
      for (const visibility of ['cancelled', 'public']) {
        const { code, message } = reject({ startTime: START, visibility }, mode);
        assert.equal(code, 'forbidden');
        assert.match(message, /only draft and unlisted can be set through the API/);
      }
    }
  });

  void it('accepts draft and unlisted through the API', () => {
    assert.equal(accept({ startTime: START, visibility: 'draft' }, 'create').visibility, 'draft');
    assert.equal(accept({ visibility: 'unlisted' }, 'update').visibility, 'unlisted');
  });

  void it('refuses an unknown visibility as invalid_argument, not forbidden', () => {
    for (const visibility of ['Public', 'private', 1, ['draft']]) invalidNaming({ visibility }, 'visibility');
  });

  void it('accepts any of the four visibilities in internal mode', () => {
    for (const visibility of VISIBILITIES) assert.equal(accept({ visibility }, 'internal').visibility, visibility);
  });

  void it('reports a malformed field before a forbidden visibility', () => {
    invalidNaming({ visibility: 'public', title: 5 }, 'title');
    invalidNaming({ visibility: 'public' }, 'startTime', 'create');
  });
});

void describe('parseEventPatch: nulls and scalar fields', () => {
  void it('keeps null for planning and onlineMeeting, meaning clear', () => {
    assert.deepEqual(accept({ planning: null, onlineMeeting: null }), { planning: null, onlineMeeting: null });
  });

  void it('refuses null for every other field, naming it and saying null is not accepted', () => {
    for (const key of EVENT_PATCH_FIELDS) {
      if (key === 'planning' || key === 'onlineMeeting') continue;
      const { code, message } = reject({ [key]: null });
      assert.equal(code, 'invalid_argument');
      assert.match(message, new RegExp(`^${key} must not be null`));
    }
  });

  void it('refuses booleans given as strings or numbers', () => {
    invalidNaming({ dateOnly: 'true' }, 'dateOnly');
    invalidNaming({ hideLocation: 1 }, 'hideLocation');
    invalidNaming({ refundOfferOnChange: 'yes' }, 'refundOfferOnChange');
  });

  void it('refuses a style string longer than 10,000 characters', () => {
    assert.equal(accept({ themeColor: 'x'.repeat(10_000) }).themeColor?.length, 10_000);
    invalidNaming({ backgroundStyle: 'x'.repeat(10_001) }, 'backgroundStyle');
    invalidNaming({ headingFont: 12 }, 'headingFont');
  });

  void it('refuses an empty or overlong id', () => {
    invalidNaming({ locationId: '' }, 'locationId');
    invalidNaming({ seriesId: 'x'.repeat(257) }, 'seriesId');
    assert.equal(accept({ locationId: 'loc_1' }).locationId, 'loc_1');
  });

  void it('refuses a titleFontScale that is not a number in (0, 10]', () => {
    for (const bad of [0, -1, 10.5, '1.2']) invalidNaming({ titleFontScale: bad }, 'titleFontScale');
    assert.equal(accept({ titleFontScale: 1.25 }).titleFontScale, 1.25);
  });
});

void describe('parseEventPatch: arrays', () => {
  void it('refuses more than 100 items in an array field', () => {
    assert.equal(accept({ tags: Array.from({ length: 100 }, (_, i) => `t${i}`) }).tags?.length, 100);
    invalidNaming({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'tags');
    invalidNaming({ additionalLocationIds: Array.from({ length: 101 }, (_, i) => `l${i}`) }, 'additionalLocationIds');
  });

  void it('refuses array items of the wrong type, naming the index', () => {
    invalidNaming({ languages: ['en', 5] }, 'languages[1]');
    invalidNaming({ imageBlobNames: ['a.jpg', ''] }, 'imageBlobNames[1]');
    invalidNaming({ additionalLocationIds: ['l1', ''] }, 'additionalLocationIds[1]');
    invalidNaming({ subtags: 'jazz' }, 'subtags');
  });

  void it("deduplicates additionalLocationIds, drops the patch's locationId and caps at 8", () => {
    const patch = accept({
      locationId: 'p',
      additionalLocationIds: ['a', 'p', 'b', 'a', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    });
    assert.deepEqual(patch.additionalLocationIds, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  void it('refuses links that are not an array of objects', () => {
    invalidNaming({ links: { url: 'https://example.com' } }, 'links');
    invalidNaming({ links: [{ url: 'https://example.com' }, 'https://example.com'] }, 'links[1]');
    assert.deepEqual(accept({ links: [{ url: 'https://example.com', label: 'Site' }] }).links, [
      { url: 'https://example.com', label: 'Site' },
    ]);
  });
});

void describe('parseEventPatch: free-form objects', () => {
  void it('copies metadata so later changes to the request do not reach the patch', () => {
    const metadata = { nested: { count: 1 } };
    const patch = accept({ metadata });
    metadata.nested.count = 2;
    assert.deepEqual(patch.metadata, { nested: { count: 1 } });
  });

  void it('keeps a __proto__ key in metadata as data, never as the prototype', () => {
    const patch = accept(JSON.parse('{"metadata":{"__proto__":{"polluted":true}}}'));
    assert.equal(Object.getPrototypeOf(patch.metadata), Object.prototype);
    assert.ok(Object.hasOwn(patch.metadata!, '__proto__'));
    assert.equal((patch.metadata as { polluted?: unknown }).polluted, undefined);
  });

  void it('refuses metadata nested more than 10 levels deep', () => {
    const nest = (levels: number): Record<string, unknown> => (levels === 0 ? {} : { a: nest(levels - 1) });
    accept({ metadata: nest(10) });
    invalidNaming({ metadata: nest(11) }, 'metadata');
  });

  void it('refuses metadata larger than 64 KiB as JSON', () => {
    invalidNaming({ metadata: { blob: 'x'.repeat(70_000) } }, 'metadata');
  });

  void it('refuses non-object values for object fields', () => {
    invalidNaming({ backgroundParams: [1, 2] }, 'backgroundParams');
    invalidNaming({ plasmaPreset: 'aurora' }, 'plasmaPreset');
    invalidNaming({ groupSizeOverride: 4 }, 'groupSizeOverride');
  });
});

void describe('parseEventPatch: planning and onlineMeeting', () => {
  void it('validates planning through its own rules, naming the nested field', () => {
    invalidNaming({ planning: { date: { mode: 'window' } } }, 'planning.date.from');
    assert.deepEqual(accept({ planning: {} }).planning, {});
  });

  void it('validates onlineMeeting through its own rules, naming the nested field', () => {
    invalidNaming({ onlineMeeting: { provider: 'zoom', url: 'https://zoom.us.evil.com/j/1' } }, 'onlineMeeting.url');
    assert.deepEqual(accept({ onlineMeeting: { provider: 'zoom', url: 'https://zoom.us/j/1' } }).onlineMeeting, {
      provider: 'zoom',
      url: 'https://zoom.us/j/1',
      label: null,
    });
  });
});

void describe('hasWritableFields', () => {
  void it('is false for an empty patch and for a body of only unknown or server-owned keys', () => {
    assert.equal(hasWritableFields({}), false);
    assert.equal(hasWritableFields(accept({ id: 'e1', foo: 1 })), false);
  });

  void it('does not count refundOfferOnChange alone', () => {
    assert.equal(hasWritableFields(accept({ refundOfferOnChange: true })), false);
    assert.equal(hasWritableFields(accept({ refundOfferOnChange: true, locationId: 'l2' })), true);
  });

  void it('counts false, empty and clearing values as writable', () => {
    assert.equal(hasWritableFields({ hideLocation: false }), true);
    assert.equal(hasWritableFields({ tags: [] }), true);
    assert.equal(hasWritableFields({ planning: null }), true);
  });
});

void describe('normaliseAdditionalLocationIds', () => {
  void it('drops the primary before capping, so an echoed primary never takes a slot', () => {
    const ids = ['p', '1', '2', '3', '4', '5', '6', '7', '8'];
    assert.deepEqual(normaliseAdditionalLocationIds(ids, 'p'), ['1', '2', '3', '4', '5', '6', '7', '8']);
    assert.deepEqual(normaliseAdditionalLocationIds(ids, null), ['p', '1', '2', '3', '4', '5', '6', '7']);
  });

  void it('never repeats an id, never holds the primary, holds at most 8 and keeps first-occurrence order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'), { maxLength: 40 }),
        fc.option(fc.constantFrom('a', 'b', 'z'), { nil: null }),
        (ids, primary) => {
          const result = normaliseAdditionalLocationIds(ids, primary);
          assert.equal(new Set(result).size, result.length);
          assert.ok(primary === null || !result.includes(primary));
          assert.ok(result.length <= MAX_ADDITIONAL_LOCATIONS);
          // Exactly the first distinct non-primary ids, in the order they first appeared.
          const expected = [...new Set(ids)].filter((id) => id !== primary).slice(0, MAX_ADDITIONAL_LOCATIONS);
          assert.deepEqual(result, expected);
        },
      ),
    );
  });
});
