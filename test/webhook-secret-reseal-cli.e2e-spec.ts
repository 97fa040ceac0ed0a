import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runOps, type OpsResult } from './support/ops-cli';
import { databaseClient } from './support/database-client';
import { fixtures } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { startTestService, type TestService } from './support/test-service';
import { nth } from './support/defined';

/** Secret rotation and re-sealing under a new WEBHOOK_SECRET_KEY, on the command line. */
describe('npm run ops -- webhooks:rotate-secret and webhooks:reseal-secrets', () => {
  let service: TestService;
  let receiving: HttpsReceiver;
  let env: NodeJS.ProcessEnv;
  let webhookId: string;
  let secret: string;

  const ops = async (args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<OpsResult> => {
    return runOps(args, { ...env, ...extraEnv });
  };

  before(async () => {
    receiving = await startHttpsReceiver();
    service = await startTestService({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '50' });
    env = {
      ...process.env,
      DATABASE_URL: service.databaseUrl,
      WEBHOOK_SECRET_KEY: service.config.webhooks.secretKey ?? '',
      WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: 'silent',
    };
    const owner = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const created = await publicApi(service)('POST', '/v1/webhooks', {
      key: owner.key,
      body: { url: `${receiving.origin}/cli`, events: ['order.confirmed'] },
    });
    assert.equal(created.status, 201, created.text);
    webhookId = created.body.data.id;
    secret = created.body.data.secret;
    const admin = internalApi(service);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: owner.id, title: { EN: 'CLI' }, startTime: '2030-01-01T10:00:00Z' },
    });
    await admin('POST', '/internal/orders', {
      body: { eventId: event.body.data.id, status: 'confirmed', lineItems: [{ quantity: 1 }], totalAmountMinor: 100 },
    });
    await receiving.waitFor((all) => all.length >= 1);
  });
  after(async () => {
    await service.close();
    await receiving.close();
  });

  it('rotates the secret with a grace period, then re-seals every secret under a new key', async () => {
    const rotated = await ops(['webhooks:rotate-secret', '--webhook', webhookId, '--grace-seconds', '60']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const fresh = rotated.json.data.secret as string;
    assert.notEqual(fresh, secret);
    assert.equal(typeof rotated.json.data.secretRotation.previousExpiresAt, 'string');

    const oldKey = env['WEBHOOK_SECRET_KEY'] as string;
    const newKey = randomBytes(32).toString('hex');
    const resealed = await ops(['webhooks:reseal-secrets'], {
      WEBHOOK_SECRET_KEY: newKey,
      WEBHOOK_SECRET_KEY_PREVIOUS: oldKey,
    });
    assert.equal(resealed.code, 0, resealed.stderr);
    assert.ok(resealed.json.data.resealed >= 1, JSON.stringify(resealed.json));

    const db = await databaseClient(service.databaseUrl);
    try {
      const stored = await db.query<{ secret_sealed: string; previous_secret_sealed: string }>(
        `SELECT secret_sealed, previous_secret_sealed FROM webhook_subscription WHERE id = $1`,
        [webhookId],
      );
      const row = nth(stored.rows, 0, 'stored subscription');
      const kid = String(row.secret_sealed.split('.')[1]);
      assert.equal(row.previous_secret_sealed.split('.')[1], kid);
    } finally {
      await db.end();
    }
    // The new key alone now opens both secrets; the old key no longer does.
    const shown = await ops(['webhooks:show', '--webhook', webhookId], { WEBHOOK_SECRET_KEY: newKey });
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.data.secret, fresh);
    const withOldKey = await ops(['webhooks:show', '--webhook', webhookId], { WEBHOOK_SECRET_KEY: oldKey });
    assert.notEqual(withOldKey.code, 0);
  });
});
