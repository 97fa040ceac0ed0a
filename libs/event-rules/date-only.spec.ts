import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CalendarDay, calendarDayIn, isValidTimeZone, noonInTimeZone } from './date-only';

/** Independent of the code under test: the wall clock Intl shows for an instant in a zone. */
function localDateTime(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(instant);
}

void describe('noonInTimeZone', () => {
  void it('gives 10:00 UTC for a summer day in Europe/Berlin (UTC+2)', () => {
    assert.equal(noonInTimeZone('2025-07-15', 'Europe/Berlin').toISOString(), '2025-07-15T10:00:00.000Z');
  });

  void it('gives 11:00 UTC for a winter day in Europe/Berlin (UTC+1)', () => {
    assert.equal(noonInTimeZone('2025-01-15', 'Europe/Berlin').toISOString(), '2025-01-15T11:00:00.000Z');
  });

  void it('lands on local noon on the Berlin days the clocks change', () => {
    assert.equal(noonInTimeZone('2025-03-30', 'Europe/Berlin').toISOString(), '2025-03-30T10:00:00.000Z');
    assert.equal(noonInTimeZone('2025-10-26', 'Europe/Berlin').toISOString(), '2025-10-26T11:00:00.000Z');
  });

  void it('handles America/New_York either side of its DST switch', () => {
    assert.equal(noonInTimeZone('2025-03-08', 'America/New_York').toISOString(), '2025-03-08T17:00:00.000Z');
    assert.equal(noonInTimeZone('2025-03-09', 'America/New_York').toISOString(), '2025-03-09T16:00:00.000Z');
    assert.equal(noonInTimeZone('2025-11-02', 'America/New_York').toISOString(), '2025-11-02T17:00:00.000Z');
  });

  void it('handles Pacific/Auckland, where local noon can fall on the previous UTC day', () => {
    assert.equal(noonInTimeZone('2025-07-01', 'Pacific/Auckland').toISOString(), '2025-07-01T00:00:00.000Z');
    assert.equal(noonInTimeZone('2025-01-01', 'Pacific/Auckland').toISOString(), '2024-12-31T23:00:00.000Z');
    // Southern-hemisphere switches: NZDT ends 2025-04-06, starts 2025-09-28.
    assert.equal(noonInTimeZone('2025-04-06', 'Pacific/Auckland').toISOString(), '2025-04-06T00:00:00.000Z');
    assert.equal(noonInTimeZone('2025-09-28', 'Pacific/Auckland').toISOString(), '2025-09-27T23:00:00.000Z');
  });

  void it('re-reads the offset when it changes between noon UTC and local noon', () => {
    // Far from UTC, noon UTC on the day can sit on the other side of a switch
    // from local noon: Samoa left DST on 2 April 2011, Tonga on 28 January 2001.
    assert.equal(noonInTimeZone('2011-04-02', 'Pacific/Apia').toISOString(), '2011-04-02T23:00:00.000Z');
    assert.equal(noonInTimeZone('2001-01-27', 'Pacific/Tongatapu').toISOString(), '2001-01-26T22:00:00.000Z');
  });

  void it('gives 12:00 UTC in UTC', () => {
    assert.equal(noonInTimeZone('2025-01-01', 'UTC').toISOString(), '2025-01-01T12:00:00.000Z');
  });

  void it("reads a Date's calendar day in the target zone, not in UTC", () => {
    // 23:30 UTC on 1 July is already 2 July in Berlin.
    assert.equal(
      noonInTimeZone(new Date('2025-07-01T23:30:00Z'), 'Europe/Berlin').toISOString(),
      '2025-07-02T10:00:00.000Z',
    );
    // 13:30 UTC on 30 June is already 1 July in Auckland.
    assert.equal(
      noonInTimeZone(new Date('2025-06-30T13:30:00Z'), 'Pacific/Auckland').toISOString(),
      '2025-07-01T00:00:00.000Z',
    );
    assert.equal(
      noonInTimeZone(new Date('2025-07-02T03:00:00Z'), 'America/New_York').toISOString(),
      '2025-07-01T16:00:00.000Z',
    );
  });

  void it('takes a date given without a time of day as the calendar day it names, in zones west of UTC too', () => {
    const day = new CalendarDay(new Date('2027-06-15T00:00:00Z'), '2027-06-15');
    assert.equal(noonInTimeZone(day, 'America/New_York').toISOString(), '2027-06-15T16:00:00.000Z');
    assert.equal(noonInTimeZone(day, 'Pacific/Pago_Pago').toISOString(), '2027-06-15T23:00:00.000Z');
    assert.equal(noonInTimeZone(day, 'Pacific/Kiritimati').toISOString(), '2027-06-14T22:00:00.000Z');
    // As an instant it is still midnight UTC.
    assert.equal(day.toISOString(), '2027-06-15T00:00:00.000Z');
  });

  void it('names the calendar day an instant falls on in a zone', () => {
    assert.equal(calendarDayIn(new Date('2027-06-15T03:00:00Z'), 'Asia/Tokyo'), '2027-06-15');
    assert.equal(calendarDayIn(new Date('2027-06-15T03:00:00Z'), 'America/New_York'), '2027-06-14');
    assert.equal(calendarDayIn(new Date('0099-01-02T12:00:00Z'), 'UTC'), '0099-01-02');
  });

  void it('reads only the YYYY-MM-DD part of a string', () => {
    assert.equal(
      noonInTimeZone('2025-07-15T23:59:00-11:00', 'Europe/Berlin').toISOString(),
      '2025-07-15T10:00:00.000Z',
    );
  });

  void it('throws for an unknown zone, an unreadable string or a day that does not exist', () => {
    assert.throws(() => noonInTimeZone('2025-07-15', 'Mars/Olympus_Mons'), RangeError);
    assert.throws(() => noonInTimeZone('15.07.2025', 'UTC'), RangeError);
    assert.throws(() => noonInTimeZone('2025-02-30', 'UTC'), RangeError);
    assert.throws(() => noonInTimeZone(new Date(Number.NaN), 'UTC'), RangeError);
  });

  void it('is always 12:00 local time on the requested day', () => {
    const zones = [
      'UTC',
      'Europe/Berlin',
      'Europe/London',
      'America/New_York',
      'America/Sao_Paulo',
      'Pacific/Auckland',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'America/St_Johns',
    ];
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1980-01-01T00:00:00Z'), max: new Date('2060-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom(...zones),
        (day, zone) => {
          const ymd = day.toISOString().slice(0, 10);
          assert.equal(localDateTime(noonInTimeZone(ymd, zone), zone), `${ymd} 12:00:00`);
        },
      ),
      { numRuns: 500 },
    );
  });
});

void describe('isValidTimeZone', () => {
  void it('accepts IANA zone names and refuses anything else', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Pacific/Auckland']) {
      assert.equal(isValidTimeZone(zone), true, zone);
    }
    for (const zone of ['', 'Mars/Olympus_Mons', 'Europe/Berlin ', 'x'.repeat(100)]) {
      assert.equal(isValidTimeZone(zone), false, zone);
    }
  });
});
