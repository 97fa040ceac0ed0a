import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInstant, parseInstantText } from './instant';

describe('parseInstant', () => {
  it('reads ISO 8601 with Z, with an offset, and without one (as UTC)', () => {
    assert.equal(parseInstant('2027-05-01T18:00:00Z')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T20:00:00+02:00')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T20:00:00+0200')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T18:00')?.toISOString(), '2027-05-01T18:00:00.000Z');
    assert.equal(parseInstant('2027-05-01')?.toISOString(), '2027-05-01T00:00:00.000Z');
    assert.equal(parseInstant('2027-05-01T18:00:00.123456Z')?.toISOString(), '2027-05-01T18:00:00.123Z');
  });

  it('reads a lowercase t and z as T and Z (RFC 3339)', () => {
    assert.equal(parseInstant('2026-12-07t19:14:10.895z')?.toISOString(), '2026-12-07T19:14:10.895Z');
    assert.equal(parseInstant('2026-12-07t19:14:10+01:00')?.toISOString(), '2026-12-07T18:14:10.000Z');
  });

  it('reads epoch milliseconds as a number in a body, and as a string of digits where every value is text', () => {
    assert.equal(parseInstant(1_800_000_000_000)?.getTime(), 1_800_000_000_000);
    assert.equal(parseInstantText('1800000000000')?.getTime(), 1_800_000_000_000);
    assert.equal(parseInstantText(' 2027-05-01T18:00:00Z ')?.toISOString(), '2027-05-01T18:00:00.000Z');
  });

  it('drops a fraction’s digits past the millisecond, and a lower bound rounds them up so no earlier instant passes it', () => {
    assert.equal(parseInstantText('2026-12-07T23:13:31.8405Z')?.toISOString(), '2026-12-07T23:13:31.840Z');
    assert.equal(
      parseInstantText('2026-12-07T23:13:31.8405Z', 'rounded up')?.toISOString(),
      '2026-12-07T23:13:31.841Z',
    );
    assert.equal(
      parseInstantText('2026-12-07T23:13:31.8400Z', 'rounded up')?.toISOString(),
      '2026-12-07T23:13:31.840Z',
    );
    assert.equal(
      parseInstantText('2026-12-31T23:59:59.9999Z', 'rounded up')?.toISOString(),
      '2027-01-01T00:00:00.000Z',
    );
  });

  it('never reads a string of digits in a body as epoch milliseconds: an ISO year or basic form is refused, not stored as 1970', () => {
    for (const value of ['2027', '20270101', '99999', '1800000000000', '-5'])
      assert.equal(parseInstant(value), null, value);
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
});

describe('instants are limited to the years 0001 to 9999', () => {
  it('accepts the first and the last millisecond of the range, and reads years below 100 as written', () => {
    assert.equal(parseInstant('0001-01-01T00:00:00Z')?.toISOString(), '0001-01-01T00:00:00.000Z');
    assert.equal(parseInstant('9999-12-31T23:59:59.999Z')?.toISOString(), '9999-12-31T23:59:59.999Z');
    assert.equal(parseInstant('0050-06-01')?.toISOString(), '0050-06-01T00:00:00.000Z');
    assert.equal(parseInstant('0004-02-29')?.toISOString(), '0004-02-29T00:00:00.000Z');
    assert.equal(parseInstant(-62_135_596_800_000)?.toISOString(), '0001-01-01T00:00:00.000Z');
  });

  it('refuses instants before 0001 or after 9999, however written', () => {
    for (const value of [
      8_640_000_000_000_000,
      -8_640_000_000_000_000,
      '8640000000000000',
      '-8640000000000000',
      253_402_300_800_000,
      -62_135_596_800_001,
      '0000-12-31T23:59:59Z',
      '0001-01-01T00:30:00+01:00',
      '9999-12-31T23:30:00-01:00',
      '0100-02-29',
    ]) {
      assert.equal(parseInstant(value), null, String(value));
    }
  });
});
