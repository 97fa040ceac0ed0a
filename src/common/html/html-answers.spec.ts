import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionUnavailableError } from '../../../test/support/connection-unavailable-error';
import { pageRefusal } from './html-answers';

describe('pageRefusal', () => {
  it('answers a page 503 with Retry-After when the database lent no connection, as the JSON API does', async () => {
    const refusal = pageRefusal(await connectionUnavailableError(), 'unexpected');
    assert.equal(refusal.status, 503);
    assert.equal(refusal.headers['Retry-After'], '5');
    assert.match(refusal.message, /could not reach its database/);
  });

  it('answers anything else unexpected 500 with the section’s own words and no header', () => {
    assert.deepEqual(pageRefusal(new Error('boom'), 'unexpected'), {
      status: 500,
      message: 'unexpected',
      domainError: null,
      headers: {},
    });
  });
});
