import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchedulerRegistry } from '@nestjs/schedule';
import pino from 'pino';
import { startService, type RunningService } from '../src/bootstrap';
import { loadAppConfig } from '../src/config/app-config';
import { ScheduledJobs } from '../src/database/jobs/scheduled-jobs';
import { NOTIFICATION_APPLICATION_NAME, NotificationHub } from '../src/database/notifications/notification-hub';
import { API_KEY_CHANGED_CHANNEL } from '../src/identity/api-key-revocations.listener';
import { WebhookDeliveryWorker } from '../src/webhooks/delivery/webhook-delivery.worker';
import { DELIVERY_CHANNEL } from '../src/webhooks/delivery/delivery-queue.repository';
import { eventually } from './support/eventually';
import { openOpsContext } from '../src/ops/ops-context';
import { loopbackSettings } from './support/test-service';
import { withApp } from './support/with-app';

function until(condition: () => boolean, what: string): Promise<true> {
  return eventually(() => Promise.resolve(condition() ? true : undefined), what);
}

describe('one notification connection per instance', () => {
  // No poll to speak of: only a notification wakes the delivery worker.
  const app = withApp({ WEBHOOK_POLL_MS: '3600000' });
  const hubOf = (running: RunningService) => running.app.get(NotificationHub);
  let worker: RunningService | null = null;

  before(async () => {
    await until(() => hubOf(app.service.running).backendPid !== null, 'the notification connection');
  });
  after(async () => {
    await worker?.close();
  });

  /**
   * Client connections to this database other than the pool's and this test's own (an autovacuum
   * worker visiting the database is a backend too, but nobody's connection).
   */
  async function otherBackends(): Promise<Array<{ pid: number; application_name: string }>> {
    const rows = await app.db.query<{ pid: number; application_name: string }>(
      `SELECT pid, application_name FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend'
          AND pid <> pg_backend_pid() AND application_name <> 'events-api'
        ORDER BY pid`,
    );
    return rows.rows;
  }

  it('key changes and delivery wake-ups share the one listening connection of the instance', async () => {
    const hub = hubOf(app.service.running);
    assert.deepEqual([...hub.channels].sort(), [API_KEY_CHANGED_CHANNEL, DELIVERY_CHANNEL]);
    assert.deepEqual(await otherBackends(), [{ pid: hub.backendPid, application_name: NOTIFICATION_APPLICATION_NAME }]);
  });

  it('a second instance (a worker) adds exactly one listening connection', async () => {
    const config = loadAppConfig({
      ...loopbackSettings(app.service.databaseUrl, app.service.adminToken),
      WEBHOOK_SECRET_KEY: app.service.config.webhooks.secretKey ?? '',
      SERVICE_ROLE: 'worker',
    });
    const running = await startService(config, pino({ level: 'silent' }));
    worker = running;
    await until(() => hubOf(running).backendPid !== null, "the worker's notification connection");
    const backends = await otherBackends();
    assert.equal(backends.length, 2, JSON.stringify(backends));
    assert.ok(backends.every((backend) => backend.application_name === NOTIFICATION_APPLICATION_NAME));
    await running.close();
    worker = null;
  });

  it('a killed connection comes back listening on every channel: a delivery wake-up reaches the worker again', async () => {
    const hub = hubOf(app.service.running);
    const worker = app.service.running.app.get(WebhookDeliveryWorker);
    const pid = hub.backendPid;
    assert.ok(pid !== null);
    await app.db.query('SELECT pg_terminate_backend($1)', [pid]);
    await until(() => hub.backendPid !== null && hub.backendPid !== pid, 'the connection to come back');
    // The reconnect itself wakes the worker (what was written meanwhile); then only a notification does.
    await until(() => worker.lastLoopAt !== null, 'the wake on reconnect');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const sweptBefore = worker.lastLoopAt;
    await app.db.query(`SELECT pg_notify($1, 'another-instance')`, [DELIVERY_CHANNEL]);
    await until(() => worker.lastLoopAt !== sweptBefore, 'the worker to sweep on the notification');
    assert.equal((await otherBackends()).length, 1, 'still one listening connection');
  });

  it('the one-shot CLI opens no notification connection and runs no scheduled job', async () => {
    const config = loadAppConfig({
      ...loopbackSettings(app.service.databaseUrl, app.service.adminToken),
      WEBHOOK_SECRET_KEY: app.service.config.webhooks.secretKey ?? '',
    });
    const context = await openOpsContext(config, pino({ level: 'silent' }));
    try {
      const hub = context.get(NotificationHub);
      assert.deepEqual(hub.channels, []);
      assert.equal(hub.backendPid, null);
      const jobs = context.get(ScheduledJobs).names;
      assert.ok(jobs.length > 0, 'the jobs are registered');
      const ticking = context.get(SchedulerRegistry).getIntervals();
      assert.deepEqual(
        jobs.filter((job) => ticking.includes(job)),
        [],
      );
      assert.equal((await otherBackends()).length, 1, "only the service's own connection");
    } finally {
      await context.close();
    }
  });
});
