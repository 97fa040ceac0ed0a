import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchedulerRegistry } from '@nestjs/schedule';
import pino from 'pino';
import { startService, type RunningService } from '../src/bootstrap';
import { loadAppConfig, type ServiceRole } from '../src/config/app-config';
import { ScheduledJobs } from '../src/database/jobs/scheduled-jobs';
import { NotificationHub } from '../src/database/notifications/notification-hub';
import { IDEMPOTENCY_PURGE_JOB } from '../src/events/idempotency/idempotency.service';
import { API_KEY_CHANGED_CHANNEL } from '../src/identity/api-key-revocations.listener';
import { SWEEP_INTERVAL_NAME, WebhookDeliveryWorker } from '../src/webhooks/delivery/webhook-delivery.worker';
import { RETENTION_INTERVAL_NAME } from '../src/webhooks/retention/webhook-retention.service';
import { DELIVERY_CHANNEL } from '../src/webhooks/delivery/delivery-queue.repository';
import { eventually } from './support/eventually';
import { startHttpsReceiver } from './support/https-receiver';
import { loopbackSettings, type TestService } from './support/test-service';
import { withApp } from './support/with-app';

const JOBS = [RETENTION_INTERVAL_NAME, IDEMPOTENCY_PURGE_JOB];
/** The receivers live on loopback; no poll to speak of, so only a notification wakes a worker. */
const DELIVERY_ENV = { WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '3600000' };

function settingsBeside(first: TestService, role: ServiceRole): Record<string, string> {
  return {
    ...loopbackSettings(first.databaseUrl, first.adminToken),
    ...DELIVERY_ENV,
    WEBHOOK_SECRET_KEY: first.config.webhooks.secretKey ?? '',
    SERVICE_ROLE: role,
  };
}

/** An instance of `role` on the same database as `first`, as a separately deployed one would be. */
function startBeside(first: TestService, role: ServiceRole): Promise<RunningService> {
  return startService(loadAppConfig(settingsBeside(first, role)), pino({ level: 'silent' }));
}

async function readyz(base: string): Promise<{ status: number; body: { status: string; checks: object } }> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: object } };
}

function until(condition: () => boolean, what: string): Promise<true> {
  return eventually(() => Promise.resolve(condition() ? true : undefined), what);
}

function intervalsOf(running: RunningService): string[] {
  return running.app.get(SchedulerRegistry).getIntervals();
}

describe('SERVICE_ROLE', () => {
  const app = withApp({ ...DELIVERY_ENV, SERVICE_ROLE: 'api' });

  it('api serves both listeners and runs neither the delivery worker nor the scheduled jobs', async () => {
    const { running } = app.service;
    assert.equal((await app.api('GET', '/v1/me')).status, 401, 'the public API serves');
    assert.equal((await app.admin('GET', '/internal/metrics')).status, 200, 'the internal API serves');
    const intervals = intervalsOf(running);
    assert.equal(intervals.includes(SWEEP_INTERVAL_NAME), false);
    for (const job of JOBS) {
      assert.ok(running.app.get(ScheduledJobs).names.includes(job), `${job} is registered`);
      assert.equal(intervals.includes(job), false, `${job} does not tick on an api instance`);
    }
    assert.equal(running.app.get(WebhookDeliveryWorker).lastLoopAt, null, 'the worker never swept');
  });

  it("api's /readyz names database and migrations only, on both listeners (no delivery worker to check)", async () => {
    for (const base of [app.service.publicUrl, app.service.adminUrl]) {
      const answer = await readyz(base);
      assert.equal(answer.status, 200, base);
      assert.deepEqual(answer.body, { status: 'ready', checks: { database: 'up', migrations: 'up' } });
    }
  });

  it('api listens for key changes (its API key cache) and not for delivery wake-ups', async () => {
    const hub = app.service.running.app.get(NotificationHub);
    await until(() => hub.backendPid !== null, 'the notification connection');
    assert.deepEqual(hub.channels, [API_KEY_CHANGED_CHANNEL]);
  });

  describe('worker', () => {
    let worker: RunningService;
    before(async () => {
      worker = await startBeside(app.service, 'worker');
    });
    after(async () => {
      await worker?.close();
    });

    it('worker serves only the admin listener, with its probes and metrics', async () => {
      assert.equal(worker.publicUrl, null);
      assert.equal(worker.app.getHttpServer().listening, false, 'no public socket');
      assert.ok(worker.adminUrl !== null);
      const health = await fetch(`${worker.adminUrl}/healthz`);
      assert.equal(health.status, 200);
      const metrics = await fetch(`${worker.adminUrl}/internal/metrics`, {
        headers: { authorization: `Bearer ${app.service.adminToken}` },
      });
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /service_readiness_check/);
    });

    it("worker's /readyz names the delivery worker's check beside the database's and the migrations'", async () => {
      assert.ok(worker.adminUrl !== null);
      await until(() => worker.app.get(WebhookDeliveryWorker).lastLoopAt !== null, 'a first sweep');
      const answer = await readyz(worker.adminUrl);
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, {
        status: 'ready',
        checks: { database: 'up', migrations: 'up', deliveryWorker: 'up' },
      });
    });

    it('worker runs the delivery worker and ticks every scheduled job', () => {
      const intervals = intervalsOf(worker);
      assert.ok(intervals.includes(SWEEP_INTERVAL_NAME));
      for (const job of JOBS) assert.ok(intervals.includes(job), job);
    });

    it('an order confirmed through an api instance is delivered by the worker, woken by its notification', async () => {
      const receiving = await startHttpsReceiver();
      try {
        const owner = await app.make.organiser({ scopes: ['webhooks:write', 'orders:read', 'events:read'] });
        const hook = await app.api('POST', '/v1/webhooks', {
          key: owner.key,
          body: { url: `${receiving.origin}/in`, events: ['order.confirmed'] },
        });
        assert.equal(hook.status, 201, hook.text);
        const event = await app.make.event(owner.id);
        const order = await app.admin('POST', '/internal/orders', {
          body: {
            eventId: event.id,
            status: 'confirmed',
            lineItems: [{ quantity: 1, unitAmountMinor: 1500 }],
            totalAmountMinor: 1500,
            currency: 'eur',
            billingName: 'Role Test',
            billingEmail: 'roles@example.com',
            paymentProvider: 'stripe',
          },
        });
        assert.equal(order.status, 201, order.text);
        // Within seconds although the worker polls hourly: the api instance's commit woke it.
        const [received] = await receiving.waitFor((all) => all.length >= 1, 5_000);
        assert.equal(received?.headers['service-event'], 'order.confirmed');
        assert.equal(
          app.service.running.app.get(WebhookDeliveryWorker).lastLoopAt,
          null,
          'the api instance sent nothing',
        );
      } finally {
        await receiving.close();
      }
    });

    it('worker without PORTAL_URL mints no portal link (409 naming PORTAL_URL); given PORTAL_URL it links there', async () => {
      assert.ok(worker.adminUrl !== null);
      const { id } = await app.make.organiser();
      const mint = (adminUrl: string) =>
        fetch(`${adminUrl}/internal/portal-links`, {
          method: 'POST',
          headers: { authorization: `Bearer ${app.service.adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ accountId: id }),
        });
      const refused = await mint(worker.adminUrl);
      assert.equal(refused.status, 409);
      const body = (await refused.json()) as { error: string; message: string };
      assert.equal(body.error, 'conflict');
      assert.match(body.message, /PORTAL_URL/);
      const pointed = await startService(
        loadAppConfig({ ...settingsBeside(app.service, 'worker'), PORTAL_URL: 'https://portal.example.test/portal' }),
        pino({ level: 'silent' }),
      );
      try {
        const minted = await mint(pointed.adminUrl!);
        assert.equal(minted.status, 201);
        const link = (await minted.json()) as { data: { url: string } };
        assert.match(link.data.url, /^https:\/\/portal\.example\.test\/portal#token=/);
      } finally {
        await pointed.close();
      }
    });

    it('worker listens for delivery wake-ups and not for key changes (it authenticates no API key)', async () => {
      const hub = worker.app.get(NotificationHub);
      await until(() => hub.backendPid !== null, 'the notification connection');
      assert.deepEqual(hub.channels, [DELIVERY_CHANNEL]);
    });
  });

  it('a worker without the admin listener refuses to start (it could be neither probed nor scraped)', async () => {
    const config = { ...loadAppConfig(settingsBeside(app.service, 'worker')), adminToken: null };
    await assert.rejects(
      startService(config, pino({ level: 'silent' })),
      /SERVICE_ROLE=worker needs the admin listener/,
    );
  });
});
