import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import type { Scope } from '../src/common/auth-context/access';
import { DashboardClient } from './support/dashboard-client';
import { databaseClient } from './support/database-client';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver, type ReplyPlan } from './support/https-receiver';
import { startTestService, type TestService } from './support/test-service';
import { eventually } from './support/eventually';

const SCOPES: Scope[] = ['events:read', 'orders:read', 'webhooks:read', 'webhooks:write'];
const DELIVERY_ENV = {
  WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
  WEBHOOK_BACKOFF_BASE_MS: '60000',
  WEBHOOK_BACKOFF_MAX_MS: '60000',
  WEBHOOK_POLL_MS: '50',
  // Long enough for a first attempt's TLS handshake on a busy machine: a first attempt timed out
  // here would wait a minute for its retry.
  WEBHOOK_TIMEOUT_MS: '800',
  LOG_LEVEL: 'warn',
};

/** 5 KiB of ASCII whose every position is recognisable, so a cut at the wrong byte shows. */
const FIVE_KIB = Array.from({ length: 5 * 1024 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join('');

describe('webhook attempt responses', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  const receivers: HttpsReceiver[] = [];

  before(async () => {
    service = await startTestService(DELIVERY_ENV);
    api = publicApi(service);
    admin = internalApi(service);
    db = await databaseClient(service.databaseUrl);
  });
  after(async () => {
    await db.end();
    await service.close();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function receiver(plan: ReplyPlan): Promise<HttpsReceiver> {
    const started = await startHttpsReceiver(plan);
    receivers.push(started);
    return started;
  }

  /** A subscription of a fresh organiser to `url`, and one confirmed order that it is told about. */
  async function subscribedAndOrdered(url: string): Promise<{ owner: Organiser; webhookId: string }> {
    const owner = await fixtures(service).organiser({ scopes: SCOPES });
    const created = await api('POST', '/v1/webhooks', { key: owner.key, body: { url, events: ['order.confirmed'] } });
    assert.equal(created.status, 201, created.text);
    const event = await admin('POST', '/internal/events', {
      body: { organizerId: owner.id, title: { EN: 'Responses' }, startTime: '2030-05-01T18:00:00Z' },
    });
    assert.equal(event.status, 201, event.text);
    const order = await admin('POST', '/internal/orders', {
      body: {
        eventId: event.body.data.id,
        status: 'confirmed',
        lineItems: [{ quantity: 1, unitAmountMinor: 900 }],
        totalAmountMinor: 900,
      },
    });
    assert.equal(order.status, 201, order.text);
    return { owner, webhookId: created.body.data.id as string };
  }

  async function firstAttempt(webhookId: string): Promise<Record<string, unknown>> {
    return eventually(async () => {
      const listed = await admin('GET', `/internal/webhooks/${webhookId}/deliveries`);
      assert.equal(listed.status, 200, listed.text);
      return listed.body.data[0]?.attemptLog[0] as Record<string, unknown> | undefined;
    }, `the first attempt of ${webhookId}`);
  }

  it('records the receiver’s status and exactly the first 1024 bytes of its body, and shows them on the internal delivery log and the dashboard only', async () => {
    const receiving = await receiver(() => ({ status: 500, body: FIVE_KIB }));
    const { owner, webhookId } = await subscribedAndOrdered(`${receiving.origin}/broken`);

    const attempt = await firstAttempt(webhookId);
    assert.equal(attempt['outcome'], 500);
    assert.equal(attempt['httpStatus'], 500);
    assert.equal(attempt['responseExcerpt'], FIVE_KIB.slice(0, 1024));

    const [stored] = (
      await db.query<{ http_status: number; bytes: number }>(
        `SELECT a.http_status, octet_length(a.response_excerpt) AS bytes
           FROM webhook_delivery_attempt a JOIN webhook_delivery_all d ON d.id = a.delivery_id
          WHERE d.subscription_id = $1`,
        [webhookId],
      )
    ).rows;
    assert.deepEqual(stored, { http_status: 500, bytes: 1024 });

    const dashboard = new DashboardClient(service.adminUrl);
    await dashboard.signIn(service.adminToken);
    const page = await dashboard.get(`/internal/dashboard/webhooks/${webhookId}`);
    assert.equal(page.status, 200);
    assert.match(page.html, /Response HTTP 500/);
    assert.ok(page.html.includes(FIVE_KIB.slice(0, 1024)), 'the excerpt is on the delivery log page');

    // The public API never shows what a receiver answered.
    const listed = await api('GET', '/v1/webhooks', { key: owner.key });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(!listed.text.includes(FIVE_KIB.slice(0, 64)), 'the public list shows no response body');
    assert.doesNotMatch(listed.text, /responseExcerpt|httpStatus/);
  });

  it('records no status and no excerpt for an attempt that timed out', async () => {
    const receiving = await receiver(() => 'hang');
    const { webhookId } = await subscribedAndOrdered(`${receiving.origin}/silent`);
    const attempt = await firstAttempt(webhookId);
    assert.equal(attempt['outcome'], 'timeout');
    assert.equal(attempt['httpStatus'], null);
    assert.equal(attempt['responseExcerpt'], null);
  });
});
