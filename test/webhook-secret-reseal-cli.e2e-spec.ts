import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ops as runOps, opsEnvFor, type OpsResult } from './support/ops-cli';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { nth } from './support/defined';
import { secondInstance } from './support/second-instance';
import { withApp } from './support/with-app';

/** Secret rotation and re-sealing under a new WEBHOOK_SECRET_KEY, with the CLI's commands (in-process). */
describe('npm run ops -- webhooks:rotate-secret and webhooks:reseal-secrets', () => {
  const newKey = randomBytes(32).toString('hex');
  // As the runbook has it, the running instance can open the new key before the re-seal: a re-seal refuses otherwise.
  const app = withApp({
    WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_SECRET_KEY_PREVIOUS: newKey,
  });
  let receiving: HttpsReceiver;
  let env: Record<string, string>;
  let webhookId: string;
  let secret: string;

  const ops = (args: string[], extraEnv: Record<string, string> = {}): Promise<OpsResult> =>
    runOps(args, { ...env, ...extraEnv });

  before(async () => {
    receiving = await startHttpsReceiver();
    env = opsEnvFor(app.service, { WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });
    const owner = await app.make.organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    ({ id: webhookId, secret } = await app.make.webhook(owner.key, `${receiving.origin}/cli`, ['order.confirmed']));
    const event = await app.make.event(owner.id, { title: { EN: 'CLI' } });
    await app.make.order(event.id, { lineItems: [{ quantity: 1 }], totalAmountMinor: 100 });
    await receiving.waitFor((all) => all.length >= 1);
  });
  after(async () => receiving.close());

  it('rotates the secret with a grace period, then re-seals every secret under a new key', async () => {
    const rotated = await ops(['webhooks:rotate-secret', '--webhook', webhookId, '--grace-seconds', '60']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const fresh = rotated.json.data.secret as string;
    assert.notEqual(fresh, secret);
    assert.equal(typeof rotated.json.data.secretRotation.previousExpiresAt, 'string');

    const oldKey = env['WEBHOOK_SECRET_KEY'] as string;
    const resealed = await ops(['webhooks:reseal-secrets'], {
      WEBHOOK_SECRET_KEY: newKey,
      WEBHOOK_SECRET_KEY_PREVIOUS: oldKey,
    });
    assert.equal(resealed.code, 0, resealed.stderr);
    assert.ok(resealed.json.data.resealed >= 1, JSON.stringify(resealed.json));

    const stored = await app.db.query<{ secret_sealed: string; previous_secret_sealed: string }>(
      `SELECT secret_sealed, previous_secret_sealed FROM webhook_subscription WHERE id = $1`,
      [webhookId],
    );
    const row = nth(stored.rows, 0, 'stored subscription');
    const kid = String(row.secret_sealed.split('.')[1]);
    assert.equal(row.previous_secret_sealed.split('.')[1], kid);
    // The new key alone now opens both secrets; the old key no longer does.
    const shown = await ops(['webhooks:show', '--webhook', webhookId], { WEBHOOK_SECRET_KEY: newKey });
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.data.secret, fresh);
    const withOldKey = await ops(['webhooks:show', '--webhook', webhookId], { WEBHOOK_SECRET_KEY: oldKey });
    assert.notEqual(withOldKey.code, 0);
    // Said as a setting's refusal: one line naming the key and the settings, exit code 2, no stack.
    const resealWithOldKey = await ops(['webhooks:reseal-secrets'], { WEBHOOK_SECRET_KEY: oldKey });
    assert.equal(resealWithOldKey.code, 2, resealWithOldKey.stderr);
    assert.equal(
      resealWithOldKey.stderr,
      `webhooks:reseal-secrets refused: a webhook secret is sealed under key ${kid}, which is neither WEBHOOK_SECRET_KEY nor listed in WEBHOOK_SECRET_KEY_PREVIOUS\n`,
    );

    // A service whose keys cannot open the stored secrets refuses to start, naming what to set, instead of
    // coming up ready to answer GET /v1/webhooks with 500s and deliver nothing.
    await assert.rejects(
      secondInstance(app.service, { WEBHOOK_SECRET_KEY: oldKey }),
      /stored webhook secrets cannot be opened with the configured keys \(\d+ under key k[0-9a-f]{12}\).*WEBHOOK_SECRET_KEY_PREVIOUS/,
    );
    const withNewKey = await secondInstance(app.service, { WEBHOOK_SECRET_KEY: newKey });
    await withNewKey.close();
  });
});

describe('webhooks:reseal-secrets refuses while a live instance cannot open the new key', () => {
  const app = withApp();

  it('exits 2 naming the instance, and re-seals nothing', async () => {
    const owner = await app.make.organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const { id: webhookId } = await app.make.webhook(owner.key, 'https://hooks.example.com/events', [
      'order.confirmed',
    ]);
    const sealedKeyId = async (): Promise<string> => {
      const { rows } = await app.db.query<{ secret_sealed: string }>(
        `SELECT secret_sealed FROM webhook_subscription WHERE id = $1`,
        [webhookId],
      );
      return String(nth(rows, 0, 'stored subscription').secret_sealed.split('.')[1]);
    };
    const before = await sealedKeyId();
    const { rows: live } = await app.db.query<{ id: string }>(`SELECT id FROM service_instance`);
    const oldKey = app.service.config.webhooks.secretKey ?? '';
    const env = opsEnvFor(app.service, {
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET_KEY_PREVIOUS: oldKey,
    });
    const refused = await runOps(['webhooks:reseal-secrets'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /^webhooks:reseal-secrets refused: 1 live instance\(s\) cannot open secrets sealed under this WEBHOOK_SECRET_KEY/,
    );
    assert.match(
      refused.stderr,
      /Restart each with it as WEBHOOK_SECRET_KEY and the old key in WEBHOOK_SECRET_KEY_PREVIOUS first/,
    );
    for (const { id } of live) assert.ok(refused.stderr.includes(id), `${id} is named: ${refused.stderr}`);
    assert.equal(await sealedKeyId(), before, 'nothing was re-sealed');
  });

  it('counts a live instance of a build that records no keys as one that cannot open the new key', async () => {
    await app.db.query(
      `INSERT INTO service_instance (id, host, role, version, pool_max, dedicated_connections, started_at, last_seen_at)
       VALUES ('older-build', 'elsewhere', 'all', '0.0.1', 20, 2, now(), now())`,
    );
    try {
      const refused = await runOps(['webhooks:reseal-secrets'], opsEnvFor(app.service));
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /: older-build on elsewhere \(a build that records no keys\)\./);
      // The suite's own instance holds the key: only the older build's is counted.
      assert.match(refused.stderr, /refused: 1 live instance\(s\)/);
    } finally {
      await app.db.query(`DELETE FROM service_instance WHERE id = 'older-build'`);
    }
    assert.equal((await runOps(['webhooks:reseal-secrets'], opsEnvFor(app.service))).code, 0);
  });
});
