import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { listenerThatFailed, startService } from './bootstrap';
import { ConfigError, listensOnEveryAddress, loadAppConfig, type AppConfig } from './config/app-config';
import { applyHeapGrowth } from './config/heap-growth';
import { ensureLocalSecret } from './config/local-secrets';
import { roleDuties } from './config/service-role';
import { startupWarnings } from './config/startup-warnings';
import { loggableError } from './common/logging/loggable-error';
import { createRootLogger } from './common/logging/logger';
import { isConnectionFailure } from './database/connection-failure';
import { settingsRefusal } from './database/settings-refusal';
import { withEmbeddedDefault, type ConfigWithDatabase } from './database/with-embedded-default';
import { seedDemoIfEmpty } from './demo/demo-seed';
import { startupBanner } from './startup-banner';

async function main(): Promise<void> {
  const started = performance.now();
  const settings = configOrExit();
  applyHeapGrowth(settings);
  const logger = createRootLogger(settings.logLevel, settings.logFormat);
  for (const warning of startupWarnings(settings)) logger.warn(warning);

  // From here a stop signal is handled: one that comes while the start is under way stops the embedded
  // database once it is up, instead of killing this process and leaving the database running alone.
  const stop = stopOnSignals(logger);
  const databaseStarting = databaseOrExit(settings, logger);
  stop.database = databaseStarting.then(({ embedded }) => {
    stop.stopDatabase = async () => {
      await embedded?.stop();
    };
  });
  const { config, embedded } = await databaseStarting;
  if (stop.stopping) return;
  const adminToken = embedded === null ? null : embeddedAdminToken(config);
  const service = await startService(
    adminToken === null ? config : { ...config, adminToken: adminToken.value },
    logger,
  ).catch(async (error: unknown) => {
    const refusal = settingsRefusal(error);
    const why =
      refusal === null
        ? undefined
        : `not retried: no retry fixes ${refusal.what}, SQLSTATE ${refusal.sqlstate}` +
          (embedded === null ? '; correct DATABASE_URL' : '');
    reportFatal(logger, error, 'the service failed to start', why);
    const hint = listenHint(error, config) ?? (embedded === null ? unreachableDatabaseHint(error) : null);
    if (hint !== null) process.stderr.write(`${hint}\n`);
    await embedded?.stop();
    return process.exit(1);
  });
  stop.closeService = async () => {
    await service.close();
  };
  if (stop.stopping) return;

  const banner = startupBanner({
    publicUrl: service.publicUrl,
    adminUrl: service.adminUrl,
    embeddedDataDir: embedded === null ? null : config.dataDir,
    generatedAdminToken: adminToken?.created === true ? adminToken.value : null,
    adminTokenFromSetting: config.adminToken !== null,
    demo: embedded === null ? null : await seedDemoIfEmpty(service.app),
    readyInMs: Math.round(performance.now() - started),
  });
  // Human-facing lines go to stdout as plain text, never into the JSON log; after the log lines of the
  // start (gathered in the log's buffer), so the two keep their order.
  await new Promise<void>((flushed) => logger.flush(() => flushed()));
  process.stdout.write(`\n${banner.join('\n')}\n\n`);
}

function configOrExit(): AppConfig {
  try {
    return loadAppConfig();
  } catch (error) {
    process.stderr.write(`configuration error: ${error instanceof ConfigError ? error.message : String(error)}\n`);
    return process.exit(2);
  }
}

async function databaseOrExit(settings: AppConfig, logger: Logger): Promise<ConfigWithDatabase> {
  try {
    return await withEmbeddedDefault(settings, (message) => logger.info({ context: 'embedded-postgres' }, message));
  } catch (error) {
    reportFatal(logger, error, 'the embedded PostgreSQL server failed to start');
    return process.exit(1);
  }
}

/**
 * A failure that stops the start is always said: in the log (stdout, JSON),
 * and on stderr as one plain line at every level (`LOG_LEVEL=silent`
 * included), where a supervisor or a terminal looks for why a process exited.
 */
function reportFatal(logger: Logger, error: unknown, message: string, why?: string): void {
  logger.fatal({ error: loggableError(error), ...(why === undefined ? {} : { why }) }, message);
  const said = `${message}: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`${why === undefined ? said : `${said} (${why})`}\n`);
}

/** Network errors of a database that cannot be reached: the setting to check, since the error names only an address. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

/** Only for the database connection's own failures: a listener's DNS error has the same codes. */
function unreachableDatabaseHint(error: unknown): string | null {
  if (!isConnectionFailure(error)) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const timedOut = typeof message === 'string' && message.includes('connection timeout');
  if (!(typeof code === 'string' && UNREACHABLE.has(code)) && !timedOut) return null;
  return 'PostgreSQL could not be reached: check that it runs and that DATABASE_URL names it (host, port or socket).';
}

/** Host name errors of a listen: the host did not resolve to an address. */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL']);

/**
 * For a listener that could not listen: which settings place it, in a plain
 * line a newcomer can act on, since the error names only an address or a
 * host name (which may be either listener's, or the database's).
 */
function listenHint(error: unknown, config: AppConfig): string | null {
  const listener = listenerThatFailed(error);
  if (listener === null) return null;
  const { hostSetting, portSetting, api } = LISTENER_SETTINGS[listener];
  const [host, port] = listener === 'public' ? [config.host, config.port] : [config.adminHost, config.adminPort];
  const { code } = error as { code?: unknown };
  if (code === 'EADDRINUSE' && listener === 'admin' && listenersShareAPort(config)) {
    return `ADMIN_PORT and PORT are both ${port}, and the public API's listener took it first: give ADMIN_PORT (the internal API) a port of its own.`;
  }
  if (code === 'EADDRINUSE') {
    return `Port ${port} is in use by another process: stop it, or set ${portSetting} (${api}) to a free port.`;
  }
  if (typeof code === 'string' && UNRESOLVED.has(code)) {
    return `${hostSetting} (${api}) is "${host}", a host name that does not resolve here: set ${hostSetting} to an address or host name of this machine.`;
  }
  if (code === 'EADDRNOTAVAIL') {
    return `${hostSetting} (${api}) is ${host}, not an address of this machine: set ${hostSetting} to one of its addresses (0.0.0.0 for all of them).`;
  }
  return `The listener of ${api} could not listen on ${host}, port ${port}: check ${hostSetting} and ${portSetting}.`;
}

/** Both listeners on one port of one address: the public one listens first, so the admin one finds it taken. */
function listenersShareAPort(config: AppConfig): boolean {
  const sameAddress =
    config.host === config.adminHost || listensOnEveryAddress(config.host) || listensOnEveryAddress(config.adminHost);
  return roleDuties(config).servesApi && config.adminPort === config.port && sameAddress;
}

const LISTENER_SETTINGS = {
  public: { hostSetting: 'HOST', portSetting: 'PORT', api: 'the public API' },
  admin: { hostSetting: 'ADMIN_HOST', portSetting: 'ADMIN_PORT', api: 'the internal API' },
} as const;

/**
 * The embedded default's admin token: `ADMIN_TOKEN` when set, else one
 * generated once into the data folder, so a fresh machine has a working
 * internal API with no settings.
 */
function embeddedAdminToken(config: AppConfig): { value: string; created: boolean } {
  if (config.adminToken !== null) return { value: config.adminToken, created: false };
  return ensureLocalSecret(config.dataDir, 'admin-token', 24);
}

/** What a stop signal stops: the database being started, or the running service and then its database. */
interface StopTargets {
  /** A signal came: the rest of the start does not begin. */
  stopping: boolean;
  /** Settles once the database is up (or failed); a stop during the start waits for it. */
  database?: Promise<void>;
  stopDatabase?: () => Promise<void>;
  closeService?: () => Promise<void>;
}

/**
 * SIGINT/SIGTERM: readiness goes 503, requests and deliveries drain, and the
 * database stops last. Installed before the start begins: a signal during
 * the start waits for an embedded database being started and stops it.
 */
function stopOnSignals(logger: Logger): StopTargets {
  const targets: StopTargets = { stopping: false };
  const shutdown = (signal: string): void => {
    if (targets.stopping) return;
    targets.stopping = true;
    const running = targets.closeService !== undefined;
    logger.info(
      { signal },
      running
        ? 'shutting down: readiness 503, draining requests and deliveries, then the database'
        : 'stopping during the start: the database is stopped once it is up',
    );
    void (async () => {
      let code = running ? 0 : 1;
      try {
        if (targets.closeService !== undefined) await targets.closeService();
        else await targets.database?.catch(() => undefined);
      } catch (error) {
        logger.error({ error: loggableError(error) }, 'shutdown did not complete cleanly');
        code = 1;
      } finally {
        // Last: the database outlives everything that writes to it.
        await targets.stopDatabase?.();
        logger.info('stopped');
        await new Promise<void>((flushed) => logger.flush(() => flushed()));
        process.exit(code);
      }
    })();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  return targets;
}

void main();
