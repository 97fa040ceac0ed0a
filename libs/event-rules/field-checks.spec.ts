import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidField, expectJsonObject, isPlainObject, ownValue, toResult } from './field-checks';

void describe('field checks', () => {
  void it('counts only object literals and null-prototype objects as plain objects', () => {
    assert.equal(isPlainObject({}), true);
    assert.equal(isPlainObject(Object.create(null)), true);
    for (const value of [null, [], new Date(), new Map(), Object.create({ inherited: 1 }), 'x', 1]) {
      assert.equal(isPlainObject(value), false);
    }
  });

  void it('reads only own properties', () => {
    const source = Object.create({ title: 'inherited' }) as Record<string, unknown>;
    source.own = 1;
    assert.equal(ownValue(source, 'own'), 1);
    assert.equal(ownValue(source, 'title'), undefined);
    assert.equal(ownValue({}, 'toString'), undefined);
  });

  void it('refuses values inside free-form objects that JSON cannot carry', () => {
    for (const inner of [new Date(), Number.NaN, Number.POSITIVE_INFINITY, undefined, () => 1, new Map()]) {
      assert.throws(() => expectJsonObject({ a: { b: inner } }, 'metadata'), /metadata\.a\.b/);
    }
  });

  void it('stops a cyclic object at the depth limit instead of overflowing the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => expectJsonObject(cyclic, 'metadata'), /nested too deeply/);
  });

  void it('shortens long keys in messages so a client cannot inflate them', () => {
    const key = 'k'.repeat(5_000);
    assert.throws(
      () => expectJsonObject({ [key]: Number.NaN }, 'metadata'),
      (error: unknown) => error instanceof InvalidField && error.message.length < 200,
    );
  });

  void it('turns only its own rejection into a result and rethrows anything else', () => {
    assert.deepEqual(
      toResult(() => {
        throw new InvalidField('x must be a string');
      }),
      { ok: false, message: 'x must be a string' },
    );
    assert.deepEqual(
      toResult(() => 1),
      { ok: true, value: 1 },
    );
    assert.throws(
      () =>
        toResult(() => {
          throw new TypeError('bug');
        }),
      TypeError,
    );
  });
});
