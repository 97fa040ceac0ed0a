import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ops as runOps, opsEnvFor, type OpsResult } from './support/ops-cli';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { nth } from './support/defined';
import { withApp } from './support/with-app';

/** The webhook operations of the CLI (in-process, as `npm run ops` runs them) against a running service's database. */
describe('npm run ops -- webhooks:*', () => {
  const app = withApp({ WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '50' });
  let receiving: HttpsReceiver;
  let env: Record<string, string>;
  let webhookId: string;

  const ops = (args: string[]): Promise<OpsResult> => runOps(args, env);

  before(async () => {
    receiving = await startHttpsReceiver();
    env = opsEnvFor(app.service, { WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8' });
    const owner = await app.make.organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    webhookId = (await app.make.webhook(owner.key, `${receiving.origin}/cli`, ['order.confirmed'])).id;
    const event = await app.make.event(owner.id, { title: { EN: 'CLI' } });
    await app.make.order(event.id, { lineItems: [{ quantity: 1 }], totalAmountMinor: 100 });
    await receiving.waitFor((all) => all.length >= 1);
  });
  after(async () => receiving.close());

  it('shows a webhook with health and warnings, and its delivery log', async () => {
    const shown = await ops(['webhooks:show', '--webhook', webhookId]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.data.id, webhookId);
    assert.deepEqual(Object.keys(shown.json.data.health), [
      'lastSuccessAt',
      'lastFailureAt',
      'successRate',
      'p50Ms',
      'p99Ms',
    ]);
    assert.deepEqual(shown.json.data.warnings, []);
    const log = await ops(['webhooks:deliveries', '--webhook', webhookId]);
    assert.equal(log.code, 0, log.stderr);
    assert.equal(log.json.data.length, 1);
    assert.equal(log.json.data[0].status, 'succeeded');
  });

  it('resends a delivery (the CLI waits for the attempt) and recovers a window', async () => {
    const deliveryId = String(nth(receiving.requests, 0, 'received deliveries').headers['service-delivery']);
    const resent = await ops(['webhooks:resend', '--webhook', webhookId, '--delivery', deliveryId]);
    assert.equal(resent.code, 0, resent.stderr);
    assert.equal(resent.json.data.status, 'succeeded');
    assert.deepEqual(
      resent.json.data.attemptLog.map((attempt: { trigger: string }) => attempt.trigger),
      ['scheduled', 'manual'],
    );
    assert.equal(receiving.requests.length, 2);

    const recovered = await ops(['webhooks:recover', '--webhook', webhookId, '--since', '2020-01-01T00:00:00Z']);
    assert.equal(recovered.code, 0, recovered.stderr);
    assert.deepEqual(recovered.json.data, { queued: 0, remaining: 0 });
  });

  it('shows the delivery it resent however far back the log holds it: behind more than a page of newer ones', async () => {
    const deliveryId = String(nth(receiving.requests, 0, 'received deliveries').headers['service-delivery']);
    await app.db.query(
      `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, attempts)
       SELECT gen_random_uuid()::text, $1, 'order.confirmed', 'ord_newer_' || n, '\\x7b7d', 'succeeded', 1
         FROM generate_series(1, 501) AS n`,
      [webhookId],
    );
    const resent = await ops(['webhooks:resend', '--webhook', webhookId, '--delivery', deliveryId]);
    assert.equal(resent.code, 0, resent.stderr);
    assert.equal(resent.json?.data?.id, deliveryId, JSON.stringify(resent.json));
    assert.equal(resent.json.data.status, 'succeeded');
  });

  it('says on stderr when a resend was refused by the CLI’s own address rules, which dropped the delivery', async () => {
    const deliveryId = String(nth(receiving.requests, 0, 'received deliveries').headers['service-delivery']);
    // The service reaches its loopback receiver; a CLI run without the service's setting does not.
    const bare = { ...env };
    delete bare['WEBHOOK_ALLOW_PRIVATE_CIDRS'];
    const resent = await runOps(['webhooks:resend', '--webhook', webhookId, '--delivery', deliveryId], bare);
    assert.equal(resent.code, 0, resent.stderr);
    assert.equal(resent.json.data.lastStatus, 'blocked_host');
    assert.equal(resent.json.data.status, 'dropped');
    assert.match(
      resent.stderr,
      /refused by this command's own address rules \(blocked_host\).*WEBHOOK_ALLOW_PRIVATE_CIDRS/,
    );
    const again = await ops(['webhooks:resend', '--webhook', webhookId, '--delivery', deliveryId]);
    assert.equal(again.json.data.status, 'succeeded');
    assert.equal(again.stderr, '', 'no note for an attempt the receiver answered');
  });

  it('says on stderr which of the service’s settings to give when a resend reached no answer (network_error)', async () => {
    const gone = await startHttpsReceiver();
    const owner = await app.make.organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const goneWebhookId = (await app.make.webhook(owner.key, `${gone.origin}/gone`, ['order.confirmed'])).id;
    const event = await app.make.event(owner.id, { title: { EN: 'Gone' } });
    await app.make.order(event.id, { lineItems: [{ quantity: 1 }], totalAmountMinor: 100 });
    await gone.waitFor((all) => all.length >= 1);
    const deliveryId = String(nth(gone.requests, 0, 'received deliveries').headers['service-delivery']);
    await gone.close();
    const resent = await ops(['webhooks:resend', '--webhook', goneWebhookId, '--delivery', deliveryId]);
    assert.equal(resent.code, 0, resent.stderr);
    assert.equal(resent.json.data.lastStatus, 'network_error');
    assert.match(resent.stderr, /reached no answer \(network_error.*NODE_EXTRA_CA_CERTS/);
  });
});
