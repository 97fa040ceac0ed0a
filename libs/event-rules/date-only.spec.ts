import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EARLIEST_INSTANT_MS, LATEST_INSTANT_MS } from '../time/instant';
import { CalendarDay, calendarDayIn, isValidTimeZone, noonInTimeZone, NoonOutOfRange } from './date-only';

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

  void it('refuses a noon outside the instants kept: the first day in a zone far east of UTC, the last in one far west', () => {
    const refusal = (date: Date | string, zone: string): NoonOutOfRange => {
      try {
        noonInTimeZone(date, zone);
      } catch (error) {
        assert.ok(error instanceof NoonOutOfRange, String(error));
        return error;
      }
      assert.fail(`noon on ${String(date)} in ${zone} was given`);
    };
    // Pago Pago kept the local mean time of the far side of the date line until the nineteenth century.
    const pagoPago = refusal('0001-01-01', 'Pacific/Pago_Pago');
    assert.deepEqual([pagoPago.day, pagoPago.noon.toISOString()], ['0001-01-01', '0000-12-31T23:22:48.000Z']);
    refusal(new Date('0001-01-01T00:00:00Z'), 'Pacific/Pago_Pago');
    refusal(new CalendarDay(new Date('0001-01-01T00:00:00Z'), '0001-01-01'), 'Etc/GMT-14');
    const lastDay = refusal('9999-12-31', 'Etc/GMT+12');
    assert.deepEqual([lastDay.day, lastDay.noon.toISOString()], ['9999-12-31', '+010000-01-01T00:00:00.000Z']);
    refusal(new Date('9999-12-31T23:59:59.999Z'), 'Etc/GMT+12');
    // The other ends stay inside.
    assert.equal(noonInTimeZone('9999-12-31', 'Pacific/Kiritimati').toISOString(), '9999-12-30T22:00:00.000Z');
    assert.equal(noonInTimeZone('9999-12-31', 'Etc/GMT-14').toISOString(), '9999-12-30T22:00:00.000Z');
    assert.equal(noonInTimeZone('0001-01-01', 'Etc/GMT+12').toISOString(), '0001-01-02T00:00:00.000Z');
  });

  void it('never gives an instant outside the instants kept, for the first and last days kept in any zone', () => {
    const zones = [...Intl.supportedValuesOf('timeZone'), 'Etc/GMT-14', 'Etc/GMT+12'];
    const days = ['0001-01-01', '0001-01-02', '9999-12-30', '9999-12-31'];
    const instants = [new Date(EARLIEST_INSTANT_MS), new Date(LATEST_INSTANT_MS)];
    for (const zone of zones) {
      for (const date of [...days, ...instants]) {
        try {
          const noon = noonInTimeZone(date, zone).getTime();
          assert.ok(noon >= EARLIEST_INSTANT_MS && noon <= LATEST_INSTANT_MS, `${String(date)} in ${zone}`);
        } catch (error) {
          assert.ok(error instanceof NoonOutOfRange, `${String(date)} in ${zone}: ${String(error)}`);
        }
      }
    }
  });

  void it('reads a wall clock before the common era as the year before 0001, not as 0001 again', () => {
    // Manila kept the local mean time of the Americas' side of the date line until the nineteenth century.
    assert.equal(calendarDayIn(new Date('0001-01-01T00:00:00Z'), 'America/New_York'), '0000-12-31');
    assert.equal(noonInTimeZone('0001-01-01', 'Asia/Manila').toISOString(), '0001-01-02T03:56:08.000Z');
    assert.equal(
      noonInTimeZone(new Date('0001-01-01T05:00:00Z'), 'Asia/Manila').toISOString(),
      '0001-01-01T03:56:08.000Z',
    );
  });

  void it('reads the day an instant late on the last day kept falls on east of UTC, in the year after it', () => {
    assert.equal(calendarDayIn(new Date('9999-12-31T12:00:00Z'), 'Etc/GMT-14'), '10000-01-01');
    assert.equal(noonInTimeZone('10000-01-01', 'Etc/GMT-14').toISOString(), '9999-12-31T22:00:00.000Z');
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
