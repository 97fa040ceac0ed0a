import pino from 'pino';
import { startService } from '../../src/bootstrap';
import { loadAppConfig } from '../../src/config/app-config';
import { loopbackSettings, type TestService } from './test-service';

/**
 * Another instance of the service on the same database as `first` (same admin
 * token and webhook key), as a second replica behind a load balancer would be.
 * Nest's static logger is the last started instance's: a suite that reads
 * log lines gives both instances the same `logTo`.
 */
export async function secondInstance(
  first: TestService,
  env: Record<string, string> = {},
  options: { logTo?: NodeJS.WritableStream } = {},
): Promise<TestService> {
  const config = loadAppConfig({
    ...loopbackSettings(first.databaseUrl, first.adminToken),
    WEBHOOK_SECRET_KEY: first.config.webhooks.secretKey ?? '',
    ...env,
  });
  const logger =
    options.logTo === undefined ? pino({ level: config.logLevel }) : pino({ level: config.logLevel }, options.logTo);
  const running = await startService(config, logger);
  if (running.adminUrl === null) throw new Error('the admin listener did not start');
  if (running.publicUrl === null) throw new Error('the public listener did not start');
  return {
    publicUrl: running.publicUrl,
    adminUrl: running.adminUrl,
    adminToken: first.adminToken,
    databaseUrl: first.databaseUrl,
    config,
    running,
    close: () => running.close(),
  };
}

/**
 * A `worker` on the same database as `first`: no public listener, so only a
 * handle to stop it. `logTo` as for secondInstance (Nest's static logger).
 */
export async function workerInstance(
  first: TestService,
  env: Record<string, string> = {},
  options: { logTo?: NodeJS.WritableStream } = {},
): Promise<{ close(): Promise<void> }> {
  const config = loadAppConfig({
    ...loopbackSettings(first.databaseUrl, first.adminToken),
    WEBHOOK_SECRET_KEY: first.config.webhooks.secretKey ?? '',
    ...env,
    SERVICE_ROLE: 'worker',
  });
  const logger =
    options.logTo === undefined ? pino({ level: config.logLevel }) : pino({ level: config.logLevel }, options.logTo);
  const running = await startService(config, logger);
  return { close: () => running.close() };
}
