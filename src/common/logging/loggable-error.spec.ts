import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QueryFailedError } from 'typeorm';
import { describeError, loggableError } from './loggable-error';

describe('logs never carry SQL parameters, driver detail, keys or secrets', () => {
  const driverError = Object.assign(new Error('invalid input syntax for type uuid: "whsec_secret"'), {
    code: '22P02',
    severity: 'ERROR',
    detail: 'Key (billing_email)=(a@b.example) already exists.',
    where: "unnamed portal parameter $2 = 'whsec_secret'",
    table: 'webhook_subscription',
  });
  const failure = new QueryFailedError('INSERT INTO x VALUES ($1, $2)', ['a@b.example', 'whsec_secret'], driverError);

  it('keeps type, SQLSTATE code, table and a message cut before the value', () => {
    const logged = loggableError(failure);
    assert.equal(logged.type, 'QueryFailedError');
    assert.equal(logged.code, '22P02');
    assert.equal(logged.table, 'webhook_subscription');
    assert.equal(logged.message, 'invalid input syntax for type uuid: [value withheld]');
    const text = JSON.stringify(logged) + describeError(failure);
    // The driver's `where` ("unnamed portal parameter …"), not the word alone: a checkout's path may contain it.
    for (const leak of ['whsec_secret', 'a@b.example', 'INSERT INTO', 'portal parameter']) {
      assert.ok(!text.includes(leak), leak);
    }
  });

  it('logs other errors with their message and stack', () => {
    const logged = loggableError(new TypeError('x is not a function'));
    assert.equal(logged.type, 'TypeError');
    assert.equal(logged.message, 'x is not a function');
    assert.match(logged.stack ?? '', /TypeError/);
    assert.equal(loggableError('text').type, 'string');
  });
});
