import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';
import { roleDuties } from './service-role';

const DATABASE_URL = 'postgres://service@db.example.com/events';
const WITH_DATABASE = { DATABASE_URL, WEBHOOK_SECRETS_PLAINTEXT: '1' };
const ADMIN_TOKEN = 'a'.repeat(32);

void describe('SERVICE_ROLE', () => {
  void it('is all by default: both listeners, the delivery worker and the scheduled jobs', () => {
    const config = loadAppConfig({});
    assert.equal(config.serviceRole, 'all');
    assert.deepEqual(roleDuties(config), { servesApi: true, runsDeliveryWorker: true, runsScheduledJobs: true });
  });

  void it('api serves both listeners and runs neither the delivery worker nor the scheduled jobs', () => {
    const config = loadAppConfig({ SERVICE_ROLE: 'api' });
    assert.deepEqual(roleDuties(config), { servesApi: true, runsDeliveryWorker: false, runsScheduledJobs: false });
  });

  void it('worker runs the delivery worker and the scheduled jobs and serves no public listener', () => {
    const config = loadAppConfig({ ...WITH_DATABASE, SERVICE_ROLE: 'worker', ADMIN_TOKEN });
    assert.deepEqual(roleDuties(config), { servesApi: false, runsDeliveryWorker: true, runsScheduledJobs: true });
  });

  void it('the one-shot CLI runs no background work whatever the role', () => {
    for (const role of ['all', 'api', 'worker']) {
      const config = { ...loadAppConfig({ SERVICE_ROLE: role }), runBackgroundWork: false };
      assert.equal(roleDuties(config).runsDeliveryWorker, false, role);
      assert.equal(roleDuties(config).runsScheduledJobs, false, role);
    }
  });

  void it('a value that is not a role stops the start naming SERVICE_ROLE', () => {
    for (const bad of ['both', 'workers', 'api,worker', '1']) {
      assert.throws(
        () => loadAppConfig({ SERVICE_ROLE: bad }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /^SERVICE_ROLE must be all, api or worker/);
          return true;
        },
      );
    }
    assert.equal(loadAppConfig({ SERVICE_ROLE: ' Worker ' }).serviceRole, 'worker');
  });

  void it('a worker without the admin listener (DATABASE_URL and no ADMIN_TOKEN) refuses to start', () => {
    assert.throws(
      () => loadAppConfig({ ...WITH_DATABASE, SERVICE_ROLE: 'worker' }),
      /SERVICE_ROLE=worker .*ADMIN_TOKEN/,
    );
    assert.equal(loadAppConfig({ ...WITH_DATABASE, SERVICE_ROLE: 'api' }).serviceRole, 'api');
  });
});
