import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LIMIT, MAX_LIMIT, parseLimit } from './page-request';

describe('parseLimit', () => {
  it('keeps integers from 1 to 100', () => {
    assert.equal(parseLimit('1'), 1);
    assert.equal(parseLimit('100'), 100);
  });

  it('clamps values above 100 to 100', () => {
    assert.equal(parseLimit('101'), MAX_LIMIT);
    assert.equal(parseLimit('99999999999999999999999'), MAX_LIMIT);
  });

  it('turns missing, non-numeric, zero or negative values into 50', () => {
    for (const raw of [undefined, '', 'abc', '0', '-3', '2.5', ['5', '6']]) {
      assert.equal(parseLimit(raw), DEFAULT_LIMIT, String(raw));
    }
  });
});
