import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from 'pg';
import { freshDatabase } from '../../test/support/test-database';
import { hasOtherClients, servesCluster } from './embedded-default';

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

describe('servesCluster (a data folder uses only the server that runs its own cluster)', () => {
  it('takes the server on pg-url’s port for the folder’s only when it runs that folder’s cluster (through a link too), never a copy’s live original', async () => {
    const url = await freshDatabase();
    const probe = new Client({ connectionString: url });
    await probe.connect();
    const running = (await probe.query<{ d: string }>(`SELECT current_setting('data_directory') AS d`)).rows[0]!.d;
    await probe.end();
    const folder = mkdtempSync(join(tmpdir(), 'serves-cluster-'));
    try {
      assert.equal(await servesCluster(url, join(folder, 'pg')), false, 'a copy of the folder: another cluster');
      symlinkSync(running, join(folder, 'linked'));
      assert.equal(await servesCluster(url, join(folder, 'linked')), true, 'the cluster, reached through a link');
      assert.equal(await servesCluster(url, running), true);
      assert.equal(await servesCluster('postgres://nobody@127.0.0.1:1/none', running), false, 'nothing answers');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
