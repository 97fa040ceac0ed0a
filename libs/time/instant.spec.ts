import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatInstant, parseInstant } from './instant';

describe('parseInstant', () => {
  it('reads ISO 8601 with Z, with an offset, and without one (as UTC)', () => {
    assert.equal(parseInstant('2027-05-01T18:00:00Z')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T20:00:00+02:00')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T20:00:00+0200')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T18:00')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01')?.toISOString(), '2027-05-01T00:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T18:00:00.123456Z')?.toISOString(), '2027-05-01T18:00:00.123Z');
  });

  it('reads epoch milliseconds as a number or a string of digits', () => {
    assert.equal(parseInstant(1_800_000_000_000)?.getTime(), 1_800_000_000_000);
    assert.equal(parseInstant('1800000000000')?.getTime(), 1_800_000_000_000);
  });

  it('rejects what it cannot read exactly instead of guessing', () => {
    for (const value of [
      'tomorrow',
      '2027-02-30',
      '2027-13-01',
      '2027-05-01T24:00:00Z',
      '2027-05-01T18:60:00Z',
      '01/05/2027',
      'Sat, 01 May 2027 18:00:00 GMT',
      '',
      1.5,
      Number.NaN,
      null,
      undefined,
      {},
      [],
      true,
      '1e12',
    ]) {
      assert.equal(parseInstant(value), null, JSON.stringify(value) ?? typeof value);
    }
  });

  it('formats instants as ISO 8601 UTC with milliseconds, and null as null', () => {
    assert.equal(formatInstant(new Date(Date.UTC(2027, 0, 2, 3, 4, 5, 6))), '2027-01-02T03:04:05.006Z');
    assert.equal(formatInstant(null), null);
  });
});
