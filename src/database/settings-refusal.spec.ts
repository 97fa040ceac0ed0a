import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settingsRefusal } from './settings-refusal';

/** The driver's error for an answer of the server, as pg makes it. */
function serverAnswer(code: string): Error {
  return Object.assign(new Error('refused'), { code, severity: 'FATAL' });
}

describe('settingsRefusal', () => {
  it('names what no retry fixes: a wrong password (28P01), a user the server does not admit (28000), a missing database (3D000)', () => {
    assert.deepEqual(settingsRefusal(serverAnswer('28P01')), { sqlstate: '28P01', what: 'a wrong password' });
    assert.equal(settingsRefusal(serverAnswer('28000'))?.sqlstate, '28000');
    assert.deepEqual(settingsRefusal(serverAnswer('3D000')), {
      sqlstate: '3D000',
      what: 'a database that does not exist',
    });
    // TypeORM's wrapper keeps the driver's error beside its own.
    assert.equal(settingsRefusal({ driverError: serverAnswer('28P01') })?.sqlstate, '28P01');
  });

  it('leaves to the retries what may pass: a refused or unanswered connection, a server that is starting (57P03), anything else', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    assert.equal(settingsRefusal(refused), null);
    assert.equal(settingsRefusal(new Error('Connection terminated due to connection timeout')), null);
    assert.equal(settingsRefusal(serverAnswer('57P03')), null);
    assert.equal(settingsRefusal(serverAnswer('constructor')), null);
    assert.equal(settingsRefusal('text'), null);
  });
});
