import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Planning, isPublishable, parsePlanning } from './planning';

function accept(value: unknown): Planning {
  const result = parsePlanning(value);
  if (!result.ok) assert.fail(`expected planning to be accepted, got: ${result.message}`);
  return result.value;
}

function refusedNaming(value: unknown, field: string): void {
  const result = parsePlanning(value);
  if (result.ok) assert.fail(`expected planning to be refused, got ${JSON.stringify(result.value)}`);
  assert.ok(result.message.includes(field), `message "${result.message}" should name ${field}`);
}

const option = (id: string, start: string, end: string | null = null) => ({
  id,
  start,
  end,
  allDay: false,
  note: null,
});

void describe('parsePlanning', () => {
  void it('fills in the default modes fixed and venue', () => {
    assert.deepEqual(accept({ date: {}, place: {} }), { date: { mode: 'fixed' }, place: { mode: 'venue' } });
  });

  void it('keeps an empty planning object empty', () => {
    assert.deepEqual(accept({}), {});
  });

  void it('drops unknown keys at every level', () => {
    const planning = accept({
      votes: 3,
      date: { mode: 'options', extra: true, options: [{ ...option('o1', '2025-06-01'), colour: 'red' }] },
      place: { mode: 'open', radiusKm: 5 },
    });
    assert.deepEqual(planning, {
      date: { mode: 'options', options: [option('o1', '2025-06-01')] },
      place: { mode: 'open' },
    });
  });

  void it('refuses a planning value that is not an object', () => {
    refusedNaming('fixed', 'planning');
    refusedNaming({ date: 'fixed' }, 'planning.date');
    refusedNaming({ place: null }, 'planning.place');
  });

  void it('refuses an unknown date or place mode', () => {
    refusedNaming({ date: { mode: 'poll' } }, 'planning.date.mode');
    refusedNaming({ place: { mode: 'online' } }, 'planning.place.mode');
  });

  void it('requires at least one option when the date mode is options', () => {
    refusedNaming({ date: { mode: 'options' } }, 'planning.date.options');
    refusedNaming({ date: { mode: 'options', options: [] } }, 'planning.date.options');
  });

  void it('refuses more than 20 date options', () => {
    const options = (count: number) => Array.from({ length: count }, (_, i) => option(`o${i}`, '2025-06-01'));
    assert.equal(accept({ date: { mode: 'options', options: options(20) } }).date?.options?.length, 20);
    refusedNaming({ date: { mode: 'options', options: options(21) } }, 'planning.date.options');
  });

  void it('refuses an option whose start cannot be parsed', () => {
    refusedNaming(
      { date: { mode: 'options', options: [option('o1', 'next friday')] } },
      'planning.date.options[0].start',
    );
    refusedNaming({ date: { mode: 'options', options: [{ id: 'o1' }] } }, 'planning.date.options[0].start');
  });

  void it('refuses a number where a date string is expected', () => {
    refusedNaming({ date: { mode: 'options', options: [{ id: 'o1', start: 1748764800000 }] } }, 'start');
  });

  void it('refuses an option that ends before it starts', () => {
    const options = [option('o1', '2025-06-01T20:00:00Z', '2025-06-01T19:00:00Z')];
    refusedNaming({ date: { mode: 'options', options } }, 'planning.date.options[0].end');
    const sameInstant = [option('o1', '2025-06-01T20:00:00Z', '2025-06-01T22:00:00+02:00')];
    accept({ date: { mode: 'options', options: sameInstant } });
  });

  void it('refuses an unparseable option end', () => {
    refusedNaming({ date: { mode: 'options', options: [option('o1', '2025-06-01', 'later')] } }, 'options[0].end');
  });

  void it("defaults an option's end, allDay and note", () => {
    const planning = accept({ date: { mode: 'options', options: [{ id: 'o1', start: '2025-06-01' }] } });
    assert.deepEqual(planning.date?.options, [{ id: 'o1', start: '2025-06-01', end: null, allDay: false, note: null }]);
  });

  void it('keeps option date strings as written', () => {
    const planning = accept({
      date: { mode: 'options', options: [{ id: 'o1', start: '2025-06-01', end: '2025-06-02', allDay: true }] },
    });
    assert.equal(planning.date?.options?.[0]?.start, '2025-06-01');
    assert.equal(planning.date?.options?.[0]?.end, '2025-06-02');
  });

  void it('refuses option fields of the wrong type', () => {
    refusedNaming({ date: { options: [{ ...option('o1', '2025-06-01'), allDay: 'yes' }] } }, 'options[0].allDay');
    refusedNaming({ date: { options: [{ ...option('o1', '2025-06-01'), note: 4 }] } }, 'options[0].note');
    refusedNaming({ date: { options: [{ ...option('', '2025-06-01') }] } }, 'options[0].id');
  });

  void it('refuses two options with the same id', () => {
    const options = [option('o1', '2025-06-01'), option('o1', '2025-06-02')];
    refusedNaming({ date: { mode: 'options', options } }, 'planning.date.options');
  });

  void it('requires from and to in window mode', () => {
    refusedNaming({ date: { mode: 'window', from: '2025-06-01' } }, 'planning.date.to');
    refusedNaming({ date: { mode: 'window', to: '2025-06-01' } }, 'planning.date.from');
  });

  void it('requires parseable window bounds with from not after to', () => {
    refusedNaming({ date: { mode: 'window', from: 'June', to: '2025-06-30' } }, 'planning.date.from');
    refusedNaming({ date: { mode: 'window', from: '2025-07-01', to: '2025-06-30' } }, 'planning.date.from');
    const planning = accept({ date: { mode: 'window', from: '2025-06-01', to: '2025-06-01', note: null } });
    assert.deepEqual(planning.date, { mode: 'window', from: '2025-06-01', to: '2025-06-01', note: null });
  });

  void it('requires a non-empty city in area mode', () => {
    refusedNaming({ place: { mode: 'area' } }, 'planning.place.city');
    refusedNaming({ place: { mode: 'area', city: '  ' } }, 'planning.place.city');
    refusedNaming({ place: { mode: 'area', city: 5 } }, 'planning.place.city');
    assert.deepEqual(accept({ place: { mode: 'area', city: 'Zürich' } }).place, { mode: 'area', city: 'Zürich' });
  });

  void it('names the field it was given as the root of its messages', () => {
    const result = parsePlanning({ date: { mode: 'poll' } }, 'body.planning');
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.message, /^body\.planning\.date\.mode /);
  });
});

void describe('isPublishable', () => {
  void it('is publishable with no planning or with a fixed date', () => {
    assert.equal(isPublishable(null), true);
    assert.equal(isPublishable(undefined), true);
    assert.equal(isPublishable({}), true);
    assert.equal(isPublishable({ place: { mode: 'area', city: 'Bern' } }), true);
    assert.equal(isPublishable(accept({ date: { mode: 'fixed' } })), true);
  });

  void it('is not publishable while the date is still options or window', () => {
    assert.equal(isPublishable(accept({ date: { mode: 'options', options: [option('o1', '2025-06-01')] } })), false);
    assert.equal(isPublishable(accept({ date: { mode: 'window', from: '2025-06-01', to: '2025-06-30' } })), false);
  });

  void it('treats a stored planning without a date mode as fixed', () => {
    assert.equal(isPublishable({ date: {} }), true);
    assert.equal(isPublishable({ date: { mode: null } }), true);
    assert.equal(isPublishable({ date: { mode: 'tbd' } }), false);
  });
});
