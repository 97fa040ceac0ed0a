import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '../../libs/keys/api-key-format';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { startTestService, type TestService } from '../../test/support/test-service';
import { seedEvents, seedOrders, seedOrganiser } from '../support/bench-seed';
import { assertSameAnswers } from '../support/same-answers';
import { startServerProcess, type ServerProcess } from '../support/server-process';
import { scenarioData, sideBySideScenarios, type ScenarioData } from '../support/side-by-side-scenarios';

/**
 * The side-by-side benchmark is only fair while the peer serves what the
 * service serves: the same bodies for every scenario, and the same refusals.
 */
const ORGANISER = 'org_00000000000000000000peer';

describe('frameworkless peer (bench/peer)', () => {
  let service: TestService;
  let peer: ServerProcess;
  const logFolder = mkdtempSync(join(tmpdir(), 'peer-'));
  let data: ScenarioData;
  const key = generateApiKey();
  const revokedKey = generateApiKey();
  const ordersOnlyKey = generateApiKey();
  const laterRevokedKey = generateApiKey();

  before(async () => {
    service = await startTestService();
    const db = new DataSource({ ...dataSourceOptions(service.databaseUrl), entities: [] });
    await db.initialize();
    await seedOrganiser(db, ORGANISER, key, ['events:read', 'events:write', 'orders:read']);
    await seedEvents(db, ORGANISER, 1_000);
    await seedOrders(db, ORGANISER, 1_000, 2_000);
    const insertKey = (id: string, secret: string, scopes: string[], revoked: boolean): Promise<unknown> =>
      db.query(
        `INSERT INTO api_key (id, key_hash, key_prefix, principal_type, principal_id, scopes, created_by_role, revoked_at)
         VALUES ($1, $2, 'svc_live_peer', 'organiser', $3, $4, 'owner', CASE WHEN $5 THEN now() END)`,
        [id, hashApiKey(secret), ORGANISER, scopes, revoked],
      );
    await insertKey('key_peer_revoked', revokedKey, ['events:read'], true);
    await insertKey('key_peer_orders', ordersOnlyKey, ['orders:read'], false);
    await insertKey('key_peer_later_revoked', laterRevokedKey, ['events:read'], false);
    await db.destroy();
    const client = new Client({ connectionString: service.databaseUrl });
    await client.connect();
    data = await scenarioData(client, { organiserId: ORGANISER, events: 1_000, limit: 50 });
    await client.end();
    peer = await startServerProcess({
      script: join(__dirname, 'peer-server.js'),
      env: { DATABASE_URL: service.databaseUrl, PUBLIC_WEB_URL: service.config.publicWebUrl, LOG_LEVEL: 'silent' },
      logFile: join(logFolder, 'peer.log'),
    });
  });

  after(async () => {
    await peer?.stop();
    await service?.close();
    rmSync(logFolder, { recursive: true, force: true });
  });

  it('answers every side-by-side scenario with the service’s status, body, headers, ETag and cursors', async () => {
    await assertSameAnswers(sideBySideScenarios(data), { service: service.publicUrl, peer: peer.url }, key, data);
  });

  it('refuses what the service refuses: unknown and revoked keys, a missing scope, a foreign cursor, an unknown parameter, a bad path, a wrong method', async () => {
    const cases: Array<{ path: string; key: string; method?: string }> = [
      { path: '/v1/events', key: generateApiKey() },
      { path: '/v1/events', key: revokedKey },
      { path: '/v1/events', key: ordersOnlyKey },
      { path: `/v1/orders?cursor=${encodeURIComponent(data.pageTwoCursor)}`, key },
      { path: '/v1/events?colour=red', key },
      { path: '/v1/events/%E0%A4%A', key },
      { path: '/v1/orders', key: 'not-a-key', method: 'DELETE' },
    ];
    for (const { path, key: bearer, method } of cases) {
      const answers = await Promise.all(
        [service.publicUrl, peer.url].map(async (base) => {
          const response = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${bearer}` } });
          const body = (await response.json()) as { error: string; request_id: string };
          assert.equal(body.request_id, response.headers.get('x-request-id'));
          return { status: response.status, error: body.error };
        }),
      );
      assert.deepEqual(answers[1], answers[0], path);
    }
  });

  it('refuses a revoked key within 1 s, the staleness bound of the service’s key cache', async () => {
    const status = async (): Promise<number> =>
      (await fetch(`${peer.url}/v1/events?limit=1`, { headers: { authorization: `Bearer ${laterRevokedKey}` } }))
        .status;
    assert.equal(await status(), 200);
    const db = new Client({ connectionString: service.databaseUrl });
    await db.connect();
    await db.query(`UPDATE api_key SET revoked_at = now() WHERE id = 'key_peer_later_revoked'`);
    await db.end();
    const revokedAt = Date.now();
    while ((await status()) === 200) {
      assert.ok(Date.now() - revokedAt < 1_000, 'the peer still accepts the key after 1 s');
      await new Promise((done) => setTimeout(done, 50));
    }
    assert.equal(await status(), 401);
  });
});
