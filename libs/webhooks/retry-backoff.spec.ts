import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_RETRY_SCHEDULE, describeSchedule, retryAfterDelayMs, retryDelayMs } from './retry-backoff';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const noJitter = (): number => 0.5;

void describe('retryDelayMs', () => {
  void it('doubles the delay from the base for each failed attempt', () => {
    const options = { baseMs: 1000, maxMs: HOUR };
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, options, noJitter)),
      [1000, 2000, 4000, 8000, 16000],
    );
  });

  void it('caps the nominal delay at maxMs', () => {
    const options = { baseMs: 1000, maxMs: 5000 };
    assert.equal(retryDelayMs(3, options, noJitter), 4000);
    assert.equal(retryDelayMs(4, options, noJitter), 5000);
    assert.equal(retryDelayMs(30, options, noJitter), 5000);
  });

  void it('leaves the nominal delay unchanged when random() returns 0.5', () => {
    assert.equal(retryDelayMs(2, { baseMs: 60_000, maxMs: HOUR, jitter: 0.2 }, noJitter), 120_000);
  });

  void it('spreads the delay by 20% either way by default', () => {
    const options = { baseMs: 10_000, maxMs: HOUR };
    assert.equal(
      retryDelayMs(1, options, () => 0),
      8_000,
    );
    assert.equal(
      retryDelayMs(1, options, () => 1),
      12_000,
    );
    assert.equal(
      retryDelayMs(1, options, () => 0.75),
      11_000,
    );
  });

  void it('uses the jitter fraction the caller gives', () => {
    assert.equal(
      retryDelayMs(1, { baseMs: 10_000, maxMs: HOUR, jitter: 0 }, () => 0),
      10_000,
    );
    assert.equal(
      retryDelayMs(1, { baseMs: 10_000, maxMs: HOUR, jitter: 0.5 }, () => 0),
      5_000,
    );
  });

  void it('always returns whole milliseconds within ±jitter of the nominal delay and never above max*(1+jitter)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 10 * MINUTE }),
        fc.integer({ min: 0, max: 2 * DAY }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        (attempt, baseMs, maxMs, jitter, r) => {
          const delay = retryDelayMs(attempt, { baseMs, maxMs, jitter }, () => r);
          const nominal = Math.min(baseMs * 2 ** (attempt - 1), maxMs);
          assert.ok(Number.isInteger(delay), `${delay} is not an integer`);
          assert.ok(delay >= 0);
          assert.ok(delay <= maxMs * (1 + jitter), `${delay} > ${maxMs} * (1 + ${jitter})`);
          assert.ok(Math.abs(delay - nominal) <= nominal * jitter + 0.5 + 1e-6, `${delay} too far from ${nominal}`);
        },
      ),
    );
  });

  void it('never rounds a jittered delay above max*(1+jitter)', () => {
    // 5 * 1.1 = 5.5 would round up to 6.
    assert.equal(
      retryDelayMs(1, { baseMs: 5, maxMs: 5, jitter: 0.1 }, () => 1),
      5,
    );
  });

  void it('lands on the cap instead of overflowing for huge attempt numbers', () => {
    const options = { baseMs: 60_000, maxMs: 12 * HOUR };
    for (const attempt of [1025, 10_000, Number.MAX_SAFE_INTEGER]) {
      assert.equal(retryDelayMs(attempt, options, noJitter), 12 * HOUR);
    }
    // 0 * 2^1024 would be NaN if the exponent were not bounded.
    assert.equal(retryDelayMs(5000, { baseMs: 0, maxMs: HOUR }, noJitter), 0);
  });

  void it('keeps the delay inside the jitter band even when the random source misbehaves', () => {
    const options = { baseMs: 10_000, maxMs: HOUR };
    assert.equal(
      retryDelayMs(1, options, () => -3),
      8_000,
    );
    assert.equal(
      retryDelayMs(1, options, () => 7),
      12_000,
    );
    assert.equal(
      retryDelayMs(1, options, () => Number.NaN),
      10_000,
    );
  });

  void it('refuses an attempt number that is not a whole number from 1', () => {
    for (const attempt of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => retryDelayMs(attempt, { baseMs: 1000, maxMs: 5000 }), RangeError, String(attempt));
    }
  });

  void it('refuses a jitter outside 0..1 and negative durations', () => {
    assert.throws(() => retryDelayMs(1, { baseMs: 1000, maxMs: 5000, jitter: 1.5 }), RangeError);
    assert.throws(() => retryDelayMs(1, { baseMs: 1000, maxMs: 5000, jitter: -0.1 }), RangeError);
    assert.throws(() => retryDelayMs(1, { baseMs: -1, maxMs: 5000 }), RangeError);
    assert.throws(() => retryDelayMs(1, { baseMs: 1000, maxMs: Number.POSITIVE_INFINITY }), RangeError);
  });
});

void describe('retryAfterDelayMs', () => {
  const now = new Date('2025-03-10T12:00:00.000Z');
  const bounds = { minMs: 1000, maxMs: HOUR };

  void it('returns null when the header is absent or empty, so the schedule applies', () => {
    assert.equal(retryAfterDelayMs(undefined, now, bounds), null);
    assert.equal(retryAfterDelayMs('', now, bounds), null);
    assert.equal(retryAfterDelayMs('   ', now, bounds), null);
  });

  void it('reads delta-seconds as seconds', () => {
    assert.equal(retryAfterDelayMs('120', now, bounds), 120_000);
    assert.equal(retryAfterDelayMs(' 30 ', now, bounds), 30_000);
  });

  void it('clamps delta-seconds to the bounds', () => {
    assert.equal(retryAfterDelayMs('0', now, bounds), 1000);
    assert.equal(retryAfterDelayMs('86400', now, bounds), HOUR);
    assert.equal(retryAfterDelayMs('99999999999999999999999', now, bounds), HOUR);
  });

  void it('reads an IMF-fixdate as the time to wait until', () => {
    assert.equal(retryAfterDelayMs('Mon, 10 Mar 2025 12:01:30 GMT', now, bounds), 90_000);
  });

  void it('reads the obsolete RFC 850 and asctime date forms', () => {
    assert.equal(retryAfterDelayMs('Monday, 10-Mar-25 12:02:00 GMT', now, bounds), 120_000);
    assert.equal(retryAfterDelayMs('Mon Mar 10 12:00:45 2025', now, bounds), 45_000);
    assert.equal(
      retryAfterDelayMs('Mon Mar  1 12:00:45 2026', now, { minMs: 0, maxMs: 400 * DAY }),
      356 * DAY + 45_000,
    );
  });

  void it('reads an RFC 850 two-digit year more than 50 years ahead as the previous century', () => {
    assert.equal(retryAfterDelayMs('Friday, 01-Jan-99 00:00:00 GMT', now, bounds), 1000);
  });

  void it('clamps a date in the past to the minimum and one far ahead to the maximum', () => {
    assert.equal(retryAfterDelayMs('Sun, 09 Mar 2025 12:00:00 GMT', now, bounds), 1000);
    assert.equal(retryAfterDelayMs('Tue, 11 Mar 2025 12:00:00 GMT', now, bounds), HOUR);
  });

  void it('returns null for values that are neither delta-seconds nor an HTTP-date', () => {
    for (const value of [
      'soon',
      '1.5',
      '-30',
      '10s',
      '2025-03-10T12:01:00Z',
      'Mon, 31 Feb 2025 12:00:00 GMT',
      'Mon, 10 Mar 2025 25:00:00 GMT',
      'Mon, 10 Foo 2025 12:00:00 GMT',
      'Mon, 10 Mar 2025 12:01:30 PST',
    ]) {
      assert.equal(retryAfterDelayMs(value, now, bounds), null, value);
    }
  });

  void it('refuses bounds whose minimum exceeds the maximum', () => {
    assert.throws(() => retryAfterDelayMs('10', now, { minMs: 5000, maxMs: 1000 }), RangeError);
  });
});

void describe('describeSchedule', () => {
  void it('lists the nominal wait before each retry: one fewer than the attempts, doubling up to the cap', () => {
    assert.deepEqual(describeSchedule({ baseMs: 1000, maxMs: 5000, maxAttempts: 6 }), [1000, 2000, 4000, 5000, 5000]);
  });

  void it('lists no waits when only one attempt is allowed', () => {
    assert.deepEqual(describeSchedule({ baseMs: 1000, maxMs: 5000, maxAttempts: 1 }), []);
  });

  void it('gives the production defaults 8 to 12 attempts spread over 2 to 4 days', () => {
    const delays = describeSchedule(DEFAULT_RETRY_SCHEDULE);
    const total = delays.reduce((sum, delay) => sum + delay, 0);
    assert.ok(DEFAULT_RETRY_SCHEDULE.maxAttempts >= 8 && DEFAULT_RETRY_SCHEDULE.maxAttempts <= 12);
    assert.ok(total >= 2 * DAY, `total ${total / HOUR} h is under 2 days`);
    assert.ok(total <= 4 * DAY, `total ${total / HOUR} h is over 4 days`);
    assert.equal(DEFAULT_RETRY_SCHEDULE.jitter, 0.2);
  });

  void it('refuses a maxAttempts that is not a whole number from 1', () => {
    assert.throws(() => describeSchedule({ baseMs: 1000, maxMs: 5000, maxAttempts: 0 }), RangeError);
    assert.throws(() => describeSchedule({ baseMs: 1000, maxMs: 5000, maxAttempts: 2.5 }), RangeError);
    assert.throws(() => describeSchedule({ baseMs: 1000, maxMs: 5000, maxAttempts: 1e9 }), RangeError);
  });
});
