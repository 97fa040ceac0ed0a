import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planAfterAttempt, type RetrySchedule } from './attempt-plan';

const schedule: RetrySchedule = { baseMs: 1_000, maxMs: 60_000, maxAttempts: 5 };
const now = new Date('2026-01-01T00:00:00Z');
const noJitter = (): number => 0.5;

function plan(attemptsBefore: number, outcome: Parameters<typeof planAfterAttempt>[0]['outcome'], retryAfter?: string) {
  return planAfterAttempt({ attemptsBefore, outcome, retryAfter, now, schedule, random: noJitter });
}

void describe('planAfterAttempt', () => {
  void it('acknowledges any 2xx', () => {
    for (const status of [200, 201, 202, 204, 299]) {
      assert.deepEqual(plan(0, status), { succeeded: true, status: 'succeeded', retryInMs: null });
    }
  });

  void it('treats a redirect, a client error and a server error alike as failures to retry', () => {
    for (const status of [301, 302, 307, 308, 400, 404, 410, 500, 502]) {
      assert.deepEqual(plan(0, status), { succeeded: false, status: 'pending', retryInMs: 1_000 }, String(status));
    }
  });

  void it('retries a timeout and a network error on the doubling schedule', () => {
    assert.equal(plan(0, 'timeout').retryInMs, 1_000);
    assert.equal(plan(1, 'network_error').retryInMs, 2_000);
    assert.equal(plan(3, 'timeout').retryInMs, 8_000);
  });

  void it('marks the delivery failed once maxAttempts attempts have failed', () => {
    assert.equal(plan(3, 500).status, 'pending');
    assert.deepEqual(plan(4, 500), { succeeded: false, status: 'failed', retryInMs: null });
  });

  void it('drops a delivery whose host resolved to a refused address, without retrying', () => {
    assert.deepEqual(plan(0, 'blocked_host'), { succeeded: false, status: 'dropped', retryInMs: null });
  });

  void it('takes Retry-After on 429 and 503 as the next wait, clamped to the schedule bounds', () => {
    assert.equal(plan(0, 429, '30').retryInMs, 30_000);
    assert.equal(plan(0, 503, '0').retryInMs, 1_000);
    assert.equal(plan(0, 503, '86400').retryInMs, 60_000);
    assert.equal(plan(0, 429, 'Thu, 01 Jan 2026 00:00:10 GMT').retryInMs, 10_000);
  });

  void it('never lets a Retry-After make the schedule run faster: a shorter ask waits the scheduled time, a longer one its own', () => {
    // The fourth attempt's scheduled wait is 8 s.
    assert.equal(plan(3, 503, '2').retryInMs, 8_000);
    assert.equal(plan(3, 429, 'Thu, 01 Jan 2026 00:00:02 GMT').retryInMs, 8_000);
    assert.equal(plan(3, 429, '30').retryInMs, 30_000);
    // However often a receiver asks for a short wait, the retries span what the schedule spans.
    let total = 0;
    for (let attemptsBefore = 0; attemptsBefore < schedule.maxAttempts - 1; attemptsBefore += 1) {
      total += plan(attemptsBefore, 503, '1').retryInMs ?? 0;
    }
    assert.equal(total, 1_000 + 2_000 + 4_000 + 8_000);
  });

  void it('ignores Retry-After on other statuses and when it cannot be read', () => {
    assert.equal(plan(0, 500, '30').retryInMs, 1_000);
    assert.equal(plan(0, 429, 'soon').retryInMs, 1_000);
  });
});
