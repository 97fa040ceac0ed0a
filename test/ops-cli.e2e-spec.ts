import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { runOps, type OpsResult } from './support/ops-cli';
import { databaseClient } from './support/database-client';
import { freshDatabase } from './support/test-database';

describe('npm run ops (the CLI shares the domain services)', () => {
  let env: NodeJS.ProcessEnv;

  const ops = async (...args: string[]): Promise<OpsResult> => {
    return runOps(args, env);
  };

  before(async () => {
    env = {
      ...process.env,
      DATABASE_URL: await freshDatabase(),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'silent',
    };
  });

  it('creates organisers, mints, lists and revokes keys, and never lists a secret', async () => {
    const organiser = await ops('organisers:create', '--name', 'CLI Org');
    assert.equal(organiser.code, 0, organiser.stderr);
    const organiserId = organiser.json.data.id as string;
    const minted = await ops(
      'keys:create',
      '--organiser',
      organiserId,
      '--role',
      'owner',
      '--scopes',
      'events:read,events:write',
    );
    assert.equal(minted.code, 0, minted.stderr);
    assert.match(minted.json.data.key, /^svc_live_[0-9a-f]{48}$/);
    assert.deepEqual(minted.json.data.scopes, ['events:read', 'events:write']);

    const listed = await ops('keys:list', '--organiser', organiserId);
    assert.equal(listed.json.data.length, 1);
    assert.ok(!JSON.stringify(listed.json).includes(minted.json.data.key.slice(9)), 'keys:list never prints a secret');

    const revoked = await ops('keys:revoke', '--key', minted.json.data.id, '--role', 'org_manager');
    assert.deepEqual(revoked.json.data, { id: minted.json.data.id, revoked: true });
    const after = await ops('keys:list', '--organiser', organiserId);
    assert.ok(after.json.data[0].revokedAt !== null);
  });

  it('creates venues, publishes events and confirms orders through the same services', async () => {
    const venue = await ops('venues:create', '--name', 'CLI Hall', '--json', '{"locations":[{"city":"Berlin"}]}');
    assert.equal(venue.code, 0, venue.stderr);
    assert.equal(venue.json.data.locations.length, 1);
    const organiser = await ops('organisers:create', '--name', 'Publishing Org');
    const db = await databaseClient(env['DATABASE_URL']!);
    try {
      await db.query(`INSERT INTO event (id, organizer_id, start_time) VALUES ('evt_cli', $1, now())`, [
        organiser.json.data.id,
      ]);
      await db.query(
        `INSERT INTO "order" (id, event_id, organizer_id, status, quantity, total_amount_minor)
         VALUES ('ord_cli', 'evt_cli', $1, 'pending', 1, 500)`,
        [organiser.json.data.id],
      );
    } finally {
      await db.end();
    }
    const published = await ops('events:publish', '--event', 'evt_cli');
    assert.equal(published.json.data.visibility, 'public');
    const confirmed = await ops('orders:confirm', '--order', 'ord_cli');
    assert.equal(confirmed.json.data.status, 'confirmed');
    const missing = await ops('orders:confirm', '--order', 'ord_missing');
    assert.equal(missing.json.error, 'not_found');
  });

  it('applies the same rules as the internal API and exits non-zero with the error code', async () => {
    const organiser = await ops('organisers:create', '--name', 'Rules Org');
    const refused = await ops('keys:create', '--organiser', organiser.json.data.id, '--role', 'viewer');
    assert.equal(refused.code, 1);
    assert.equal(refused.json.error, 'forbidden');
    const usage = await ops('keys:create', '--role', 'owner');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--organiser/);
  });
});
