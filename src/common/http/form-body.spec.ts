import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORM_BODY_LIMIT, parseFormBody } from './json-body';

describe('parseFormBody', () => {
  it('reads a repeated field as one array of its values, in order, and a single one as its value', () => {
    assert.deepEqual(parseFormBody('scope=a&name=x&scope=b&scope=c'), { scope: ['a', 'b', 'c'], name: 'x' });
  });

  it('keeps every value of a name repeated as often as the form limit allows', () => {
    const repeats = FORM_BODY_LIMIT / 2;
    const fields = parseFormBody('a&'.repeat(repeats - 1) + 'a');
    assert.equal(Object.keys(fields).length, 1);
    assert.equal((fields['a'] as string[]).length, repeats);
  });

  it('drops names that could reach an object’s prototype', () => {
    const fields = parseFormBody('__proto__=x&constructor=y&prototype=z&kept=1');
    assert.deepEqual(fields, { kept: '1' });
    assert.equal(Object.getPrototypeOf(fields), Object.prototype);
  });
});
