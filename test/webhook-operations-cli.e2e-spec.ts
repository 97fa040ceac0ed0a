import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runOps, type OpsResult } from './support/ops-cli';
import { fixtures } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { startTestService, type TestService } from './support/test-service';
import { nth } from './support/defined';

/** The webhook operations on the command line, against a running service's database. */
describe('npm run ops -- webhooks:*', () => {
  let service: TestService;
  let receiving: HttpsReceiver;
  let env: NodeJS.ProcessEnv;
  let webhookId: string;

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
});
