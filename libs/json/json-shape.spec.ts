import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonShapeProblem, jsonTextShapeProblem, unstorableTextProblem } from './json-shape';

function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level += 1) value = [value];
  return value;
}

describe('jsonShapeProblem: one bounded structural check', () => {
  it('accepts ordinary bodies, surrogate pairs included', () => {
    assert.equal(jsonShapeProblem({ title: { en: 'Jazz 🎷' }, tags: [1, true, null, 'x'] }), null);
  });

  it('limits depth to 32 without recursion, even at 200,000 levels', () => {
    assert.equal(jsonShapeProblem(nestedArrays(32)), null);
    assert.match(jsonShapeProblem(nestedArrays(33)) ?? '', /deeper than 32 levels/);
    assert.match(jsonShapeProblem(JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)) ?? '', /deeper than 32/);
  });

  it('limits keys per object to 1,000, naming the object', () => {
    const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 0]));
    assert.equal(jsonShapeProblem({ metadata: keys(1000) }), null);
    assert.equal(jsonShapeProblem({ metadata: keys(1001) }), 'metadata has more than 1,000 keys.');
  });

  it('limits values to 10,000 in all', () => {
    assert.equal(jsonShapeProblem({ a: Array(9_998).fill(0) }), null);
    assert.match(jsonShapeProblem({ a: Array(10_000).fill(0) }) ?? '', /more than 10,000 values/);
    assert.match(jsonShapeProblem({ a: Array(500_000).fill([]) }) ?? '', /more than 10,000 values/);
  });

  it('limits strings and keys to 10,000 characters', () => {
    assert.equal(jsonShapeProblem({ a: 'x'.repeat(10_000) }), null);
    assert.equal(jsonShapeProblem({ a: ['x'.repeat(10_001)] }), 'a[0] is longer than 10,000 characters.');
    assert.match(jsonShapeProblem({ ['k'.repeat(10_001)]: 1 }) ?? '', /A key of the body is longer/);
  });

  it('refuses NUL and lone surrogates in keys and values', () => {
    assert.match(jsonShapeProblem({ a: 'x\u0000' }) ?? '', /^a must not contain the NUL/);
    assert.match(
      jsonShapeProblem({ a: { ['\ud800']: 1 } }) ?? '',
      /^A key of a must not contain a lone UTF-16 surrogate/,
    );
    assert.match(jsonShapeProblem(['\udc00x']) ?? '', /lone UTF-16 surrogate/);
    assert.equal(unstorableTextProblem('\ud83c\udf89'), null);
    assert.notEqual(unstorableTextProblem('\udf89\ud83c'), null);
  });
});

describe('jsonTextShapeProblem: the same limits read from the bytes, before parsing', () => {
  const check = (text: string) => jsonTextShapeProblem(Buffer.from(text));

  it('refuses depth 33 at the 33rd opening bracket, ignoring brackets inside strings', () => {
    assert.equal(check(`${'['.repeat(32)}${']'.repeat(32)}`), null);
    assert.match(check(`${'['.repeat(33)}`) ?? '', /deeper than 32 levels/);
    assert.equal(check(`["${'['.repeat(100)}", "\\"${'{'.repeat(100)}"]`), null);
  });

  it('refuses more than 1,000 members in one object, but not 1,000 elements of an array', () => {
    const members = (count: number) => `{${Array.from({ length: count }, (_, i) => `"k${i}":[0,0]`).join(',')}}`;
    assert.equal(check(members(1000)), null);
    assert.match(check(members(1001)) ?? '', /more than 1,000 keys/);
    assert.equal(check(`[${Array(5000).fill('0').join(',')}]`), null);
  });

  it('refuses 10,000 commas (more than 10,000 values) but not commas inside strings', () => {
    assert.equal(check(`[${Array(9_999).fill('0').join(',')}]`), null);
    assert.match(check(`[${Array(10_001).fill('0').join(',')}]`) ?? '', /more than 10,000 values/);
    assert.equal(check(`["${','.repeat(50_000)}"]`), null);
  });

  it('never refuses what the structural check accepts (property over random JSON)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 40 }), (value) => {
        if (jsonShapeProblem(value) === null) assert.equal(check(JSON.stringify(value)), null);
      }),
      { numRuns: 500 },
    );
  });
});
