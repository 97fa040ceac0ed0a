import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureName } from './failure-name';

describe('failureName', () => {
  it("names a server error by its type and SQLSTATE, never by its message (which may quote a row's value)", () => {
    const error = Object.assign(new Error('invalid input syntax for type uuid: "secret-value"'), {
      code: '22P02',
      severity: 'ERROR',
    });
    assert.equal(failureName(error), 'Error 22P02');
  });

  it('keeps the message of a failure that is not the server’s (a refused connection, our own timeout)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    assert.equal(failureName(refused), 'Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432');
    assert.equal(failureName(new Error('no heartbeat for 3000 ms')), 'Error: no heartbeat for 3000 ms');
    assert.equal(failureName('text'), 'a non-Error value was thrown');
  });
});
