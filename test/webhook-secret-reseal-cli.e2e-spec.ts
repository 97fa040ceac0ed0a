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
  const app = withApp({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '50' });
  let receiving: HttpsReceiver;
  let env: Record<string, string>;
  let webhookId: string;
  let secret: string;
  /** The key the first test re-sealed under, which the suite's secrets need from then on. */
  let resealedUnder: string | undefined;

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
    const newKey = randomBytes(32).toString('hex');
    resealedUnder = newKey;
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

    // A service whose keys cannot open the stored secrets refuses to start, naming what to set, instead of
    // coming up ready to answer GET /v1/webhooks with 500s and deliver nothing.
    await assert.rejects(
      secondInstance(app.service, { WEBHOOK_SECRET_KEY: oldKey }),
      /stored webhook secrets cannot be opened with the configured keys \(\d+ under key k[0-9a-f]{12}\).*WEBHOOK_SECRET_KEY_PREVIOUS/,
    );
    const withNewKey = await secondInstance(app.service, { WEBHOOK_SECRET_KEY: newKey });
    await withNewKey.close();
  });

  it('reseal warns on stderr, naming each live instance, that it cannot check the keys running instances hold', async () => {
    const { rows } = await app.db.query<{ id: string }>(
      `SELECT id FROM service_instance WHERE last_seen_at >= now() - interval '15 seconds'`,
    );
    assert.ok(rows.length >= 1, 'the suite’s service is a live instance');
    const resealed = await ops(
      ['webhooks:reseal-secrets'],
      resealedUnder === undefined ? {} : { WEBHOOK_SECRET_KEY: resealedUnder },
    );
    assert.equal(resealed.code, 0, resealed.stderr);
    const warning = resealed.stderr.split('\n').find((line) => line.startsWith('warning: '));
    assert.ok(warning, resealed.stderr);
    assert.match(warning, /cannot check which keys running instances hold/);
    assert.match(
      warning,
      /restarted with this WEBHOOK_SECRET_KEY \(the old key in WEBHOOK_SECRET_KEY_PREVIOUS\) first/,
    );
    for (const { id } of rows) assert.ok(warning.includes(id), `${id} is named: ${warning}`);
  });
});
