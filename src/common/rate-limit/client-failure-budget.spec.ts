import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { ClientFailureBudget, type Admission } from './client-failure-budget';

const WINDOW_MS = 60_000;
/** 15 s into a window aligned to the clock. */
const START = 1_000 * WINDOW_MS + 15_000;

function refusalOf(attempt: () => unknown): DomainError {
  try {
    attempt();
  } catch (error) {
    assert.ok(error instanceof DomainError, String(error));
    return error;
  }
  assert.fail('the request was let in');
}

function admitted(admission: Admission | null): Admission {
  assert.ok(admission !== null, 'the budget is on');
  return admission;
}

describe('ClientFailureBudget', () => {
  it('counts the requests still undecided against the budget: a burst from one address is let in only up to the figure', () => {
    const budget = new ClientFailureBudget(3, 60, () => START);
    for (let i = 0; i < 3; i += 1) admitted(budget.admit('public', '192.0.2.1'));
    const refusal = refusalOf(() => budget.admit('public', '192.0.2.1'));
    assert.equal(refusal.code, ErrorCode.RateLimited);
    assert.deepEqual(refusal.headers, {
      'retry-after': '45',
      'x-ratelimit-limit': '3',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String((START + 45_000) / 1000),
    });
    assert.match(refusal.message, /still being answered/);
    admitted(budget.admit('public', '192.0.2.2'));
    admitted(budget.admit('admin', '192.0.2.1'));
  });

  it('lets requests carrying one credential share one unit while undecided, and counts each of them that fails as a failure', () => {
    const budget = new ClientFailureBudget(3, 60, () => START);
    const burst = Array.from({ length: 50 }, () => admitted(budget.admit('public', '192.0.2.1', 'Bearer one-key')));
    admitted(budget.admit('public', '192.0.2.1', 'Bearer another-key'));
    admitted(budget.admit('public', '192.0.2.1'));
    // Three units are held (one key's burst, another key, a request without one): a third key is refused.
    assert.equal(
      refusalOf(() => budget.admit('public', '192.0.2.1', 'Bearer a-third-key')).code,
      ErrorCode.RateLimited,
    );

    for (const admission of burst.slice(0, 49)) budget.settle(admission, false);
    assert.equal(
      refusalOf(() => budget.admit('public', '192.0.2.1', 'Bearer a-third-key')).code,
      ErrorCode.RateLimited,
    );
    budget.settle(burst[49] as Admission, false);
    admitted(budget.admit('public', '192.0.2.1', 'Bearer a-third-key'));

    // A wrong key sent many times at once is one guess in flight, but every answer of 401 is a failure.
    const budgetForGuesses = new ClientFailureBudget(3, 60, () => START);
    const guesses = Array.from({ length: 5 }, () => admitted(budgetForGuesses.admit('public', 'b', 'Bearer wrong')));
    for (const guess of guesses) budgetForGuesses.settle(guess, true);
    assert.match(
      refusalOf(() => budgetForGuesses.admit('public', 'b', 'Bearer wrong')).message,
      /^Too many failed requests from this address \(3 per 60 seconds\); retry after/,
    );
  });

  it('counts an IPv6 client by its /64: a host changing its address within its /64 is refused at the figure', () => {
    const budget = new ClientFailureBudget(3, 60, () => START);
    for (let i = 1; i <= 3; i += 1) budget.recordFailure('public', `2001:db8:1:2::${i}`);
    assert.equal(refusalOf(() => budget.admit('public', '2001:db8:1:2:abcd::9')).code, ErrorCode.RateLimited);
    admitted(budget.admit('public', '2001:db8:1:3::1'));
  });

  it('gives the unit of a request that succeeds back and turns the unit of one that fails into a failure', () => {
    const budget = new ClientFailureBudget(2, 60, () => START);
    const [first, second] = [admitted(budget.admit('public', 'a')), admitted(budget.admit('public', 'a'))];
    budget.settle(first, false);
    const third = admitted(budget.admit('public', 'a'));
    budget.settle(second, true);
    budget.settle(third, true);
    const refusal = refusalOf(() => budget.admit('public', 'a'));
    assert.match(refusal.message, /^Too many failed requests from this address \(2 per 60 seconds\); retry after/);
  });

  it('settles each admission once: a second settlement gives no unit back', () => {
    const budget = new ClientFailureBudget(2, 60, () => START);
    const first = admitted(budget.admit('public', 'a'));
    admitted(budget.admit('public', 'a'));
    budget.settle(first, false);
    budget.settle(first, false);
    admitted(budget.admit('public', 'a'));
    refusalOf(() => budget.admit('public', 'a'));
  });

  it('counts the failure of a request whose unit was given back before it failed', () => {
    const budget = new ClientFailureBudget(1, 60, () => START);
    const request = admitted(budget.admit('public', 'a'));
    budget.settle(request, false);
    budget.settle(request, true);
    refusalOf(() => budget.admit('public', 'a'));
  });

  it('counts failures of requests it did not let in', () => {
    const budget = new ClientFailureBudget(2, 60, () => START);
    budget.recordFailure('public', 'a');
    admitted(budget.admit('public', 'a'));
    refusalOf(() => budget.admit('public', 'a'));
  });

  it('starts failures afresh each window but keeps counting undecided requests until the window after their own ends', () => {
    let now = START;
    const budget = new ClientFailureBudget(4, 60, () => now);
    budget.recordFailure('public', 'a');
    const [first, second] = [admitted(budget.admit('public', 'a')), admitted(budget.admit('public', 'a'))];
    now += WINDOW_MS;
    const [third, fourth] = [admitted(budget.admit('public', 'a')), admitted(budget.admit('public', 'a'))];
    refusalOf(() => budget.admit('public', 'a'));
    budget.settle(first, true);
    budget.settle(second, false);
    const fifth = admitted(budget.admit('public', 'a'));
    refusalOf(() => budget.admit('public', 'a'));
    budget.settle(fifth, false);
    now += WINDOW_MS;
    const [sixth, seventh] = [admitted(budget.admit('public', 'a')), admitted(budget.admit('public', 'a'))];
    refusalOf(() => budget.admit('public', 'a'));
    budget.settle(sixth, false);
    budget.settle(seventh, false);
    // Requests never settled (their connection gone before an answer was decided) stop counting here.
    now += WINDOW_MS;
    for (let i = 0; i < 4; i += 1) admitted(budget.admit('public', 'a'));
    budget.settle(third, false);
    budget.settle(fourth, false);
    refusalOf(() => budget.admit('public', 'a'));
  });

  it('lets everything in and counts nothing at 0', () => {
    const budget = new ClientFailureBudget(0, 60, () => START);
    for (let i = 0; i < 5; i += 1) {
      budget.recordFailure('public', 'a');
      assert.equal(budget.admit('public', 'a'), null);
    }
  });
});
