import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from 'pg';
import { freshDatabase } from '../../test/support/test-database';
import { hasOtherClients } from './embedded-default';

describe('hasOtherClients (a one-shot command leaves a server a service uses running)', () => {
  it('sees another process’s connection to the database, and none when there is none', async () => {
    const url = await freshDatabase();
    assert.equal(await hasOtherClients(url), false, 'its own connection does not count');
    const service = new Client({ connectionString: url });
    await service.connect();
    try {
      assert.equal(await hasOtherClients(url), true);
    } finally {
      await service.end();
    }
  });
});
