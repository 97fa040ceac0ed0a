import 'reflect-metadata';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startService } from './bootstrap';
import { ConfigError, loadAppConfig, type AppConfig } from './config/app-config';
import { ensureLocalSecret, localSecret } from './config/local-secrets';
import { startupWarnings } from './config/startup-warnings';
import { loggableError } from './common/logging/loggable-error';
import { createRootLogger } from './common/logging/logger';
import { openEmbeddedDefault, type EmbeddedDefault } from './database/embedded-default';
import { seedDemoIfEmpty } from './demo/demo-seed';

/** Human-facing lines (where to connect, demo keys) go to stdout as plain text, never into the JSON log. */
function announce(lines: string[]): void {
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

async function main(): Promise<void> {
  const started = performance.now();
  let config: AppConfig;
  try {
    config = loadAppConfig();
  } catch (error) {
    process.stderr.write(`configuration error: ${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const logger = createRootLogger(config.logLevel, config.logFormat);
  for (const warning of startupWarnings(config)) logger.warn(warning);

  let embedded: EmbeddedDefault | null = null;
  /** Set only on the start that generated the token: it is shown then and never again. */
  let generatedAdminToken: string | null = null;
  if (config.databaseUrl === null) {
    try {
      embedded = await openEmbeddedDefault(config.dataDir, (message) =>
        logger.info({ context: 'embedded-postgres' }, message),
      );
    } catch (error) {
      logger.fatal({ error: loggableError(error) }, 'the embedded PostgreSQL server failed to start');
      process.exit(1);
    }
    let adminToken = config.adminToken;
    if (adminToken === null) {
      const secret = ensureLocalSecret(config.dataDir, 'admin-token', 24);
      adminToken = secret.value;
      if (secret.created) generatedAdminToken = secret.value;
    }
    config = {
      ...config,
      databaseUrl: embedded.url,
      adminToken,
      webhooks: {
        ...config.webhooks,
        secretKey: config.webhooks.secretKey ?? localSecret(config.dataDir, 'webhook-secret-key', 32),
      },
    };
  }

  const stopDatabase = async (): Promise<void> => {
    await embedded?.stop();
  };
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(config, logger);
  } catch (error) {
    logger.fatal({ error: loggableError(error) }, 'the service failed to start');
    await stopDatabase();
    process.exit(1);
  }

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: readiness 503, draining requests and deliveries, then the database');
    void (async () => {
      let code = 0;
      try {
        await service.close();
      } catch (error) {
        logger.error({ err: error }, 'shutdown did not complete cleanly');
        code = 1;
      } finally {
        // Last: the database outlives everything that writes to it.
        await stopDatabase();
        logger.info('stopped');
        process.exit(code);
      }
    })();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const lines = [
    `Public API    ${service.publicUrl}/v1   (reference: ${service.publicUrl}/docs, ${service.publicUrl}/openapi.json)`,
    service.adminUrl === null
      ? 'Internal API  off (set ADMIN_TOKEN to enable it)'
      : `Internal API  ${service.adminUrl}/internal`,
    `Database      ${embedded === null ? 'DATABASE_URL' : `embedded PostgreSQL in ${join(config.dataDir, 'pg')}`}`,
  ];
  if (embedded !== null) {
    lines.push(
      generatedAdminToken === null
        ? `Admin token   kept in ${join(config.dataDir, 'admin-token')} (or ADMIN_TOKEN)`
        : `Admin token   ${generatedAdminToken}   (generated now, shown once; kept in ${join(config.dataDir, 'admin-token')})`,
    );
    const demo = await seedDemoIfEmpty(service.app);
    if (demo !== null) {
      lines.push(
        '',
        'First start: demo data created. These keys are shown once and cannot be recovered:',
        `  organiser ${demo.organiserId}  key ${demo.organiserKey}`,
        `  venue     ${demo.venueId}  key ${demo.venueKey}`,
        '',
        `Try: curl -H 'Authorization: Bearer ${demo.organiserKey}' ${service.publicUrl}/v1/me`,
      );
    }
  }
  lines.push(`Ready in ${Math.round(performance.now() - started)} ms.`);
  announce(lines);
}

void main();
