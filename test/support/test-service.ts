import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { startService, type RunningService } from '../../src/bootstrap';
import { loadAppConfig, type AppConfig } from '../../src/config/app-config';
import { freshDatabase } from './test-database';

export interface TestService {
  publicUrl: string;
  adminUrl: string;
  adminToken: string;
  databaseUrl: string;
  config: AppConfig;
  running: RunningService;
  close(): Promise<void>;
}

/** Settings for an in-process service on OS-chosen loopback ports, as tests and benchmarks run it. */
export function loopbackSettings(databaseUrl: string, adminToken: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_TOKEN: adminToken,
    PUBLIC_WEB_URL: 'https://events.example.test',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'silent',
  };
}

/**
 * Boots the real application on loopback ports chosen by the OS, over a
 * fresh database (or `options.databaseUrl`), exactly as `npm start` does
 * (minus the embedded server, which the test run shares). `env` overrides
 * settings, as the environment would.
 */
export async function startTestService(
  env: Record<string, string> = {},
  options: { logTo?: NodeJS.WritableStream; databaseUrl?: string } = {},
): Promise<TestService> {
  const databaseUrl = options.databaseUrl ?? (await freshDatabase());
  const adminToken = randomBytes(16).toString('hex');
  const config = loadAppConfig({ ...loopbackSettings(databaseUrl, adminToken), ...env });
  const logger =
    options.logTo === undefined ? pino({ level: config.logLevel }) : pino({ level: config.logLevel }, options.logTo);
  const running = await startService(config, logger);
  if (running.adminUrl === null) throw new Error('the admin listener did not start');
  if (running.publicUrl === null) throw new Error('the public listener did not start');
  return {
    publicUrl: running.publicUrl,
    adminUrl: running.adminUrl,
    adminToken,
    databaseUrl,
    config,
    running,
    close: () => running.close(),
  };
}
