// First: every library loaded after it comes from the vendor bundle when there is one (libs/modules/vendor-bundle.ts).
import '../libs/modules/use-vendor-bundle';
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ConfigError, listensOnEveryAddress, loadAppConfig, type AppConfig } from './config/app-config';
import { applyHeapGrowth } from './config/heap-growth';
import { ensureLocalSecret } from './config/local-secrets';
import { roleDuties } from './config/service-role';
import { startupWarnings } from './config/startup-warnings';
import { loggableError } from './common/logging/loggable-error';
import { createRootLogger, flushedBeforeExit } from './common/logging/logger';
import { isConnectionFailure } from './database/connection-failure';
import { ConnectionBudgetRefusal } from './database/instances/connection-budget';
import type { InstanceRegistry } from './database/instances/instance-registry';
import { settingsRefusal } from './database/settings-refusal';
import { withEmbeddedDefault } from './database/with-embedded-default';
import { startupBanner, type StartupFacts } from './startup-banner';
import { saveVendorCodeCache } from '../libs/modules/vendor-bundle';

/**
 * The application itself (Nest, Fastify, TypeORM and every context), which
 * takes a second or two of CPU to load: loaded only once the settings are
 * known to be good, so that a configuration error is said at once. Not while
 * the embedded PostgreSQL starts: loading holds the event loop, and that
 * start times its checks of a server already running on the data folder.
 */
async function loadApplication() {
  const [{ listenerThatFailed, startService }, { InstanceRegistry }, { seedDemoIfEmpty }] = await Promise.all([
    import('./bootstrap.js'),
    import('./database/instances/instance-registry.js'),
    import('./demo/demo-seed.js'),
  ]);
  return { listenerThatFailed, startService, InstanceRegistry, seedDemoIfEmpty };
}

async function main(): Promise<void> {
  const settings = configOrExit();
  applyHeapGrowth(settings);
  const logger = createRootLogger(settings.logLevel, settings.logFormat);
  for (const warning of startupWarnings(settings)) logger.warn(warning);

  // From here a stop signal is handled: one that comes while the start is under way ends it (stopOnSignals'
  // comment says how), instead of killing this process and leaving the embedded database running alone.
  const stop = stopOnSignals(logger, settings.shutdownTimeoutMs);
  // Read (and held to ADMIN_TOKEN's rule) before the embedded database starts: a bad file refuses at once.
  const adminToken = settings.databaseUrl === null ? embeddedAdminTokenOrExit(settings) : null;
  const { config, embedded } = await stop
    .step(
      withEmbeddedDefault(settings, (message) => logger.info({ context: 'embedded-postgres' }, message), {
        keep: { warn: (message) => logger.warn({ context: 'embedded-postgres' }, message) },
      }),
      ({ embedded: opened }) =>
        async () => {
          await opened?.stop();
        },
      true,
    )
    .catch((error: unknown) => {
      // The data folder's webhook key file, held to WEBHOOK_SECRET_KEY's rule before the server starts.
      if (error instanceof ConfigError) {
        sayConfigurationError(error);
        return stop.fail(2);
      }
      reportFatal(logger, error, 'the embedded PostgreSQL server failed to start');
      return stop.fail(1);
    });
  const loading = loadApplication();
  const service = await stop
    .step(
      loading.then(({ startService }) =>
        startService(adminToken === null ? config : { ...config, adminToken: adminToken.value }, logger),
      ),
      (running) => () => running.close(),
    )
    .catch(async (error: unknown) => {
      const refusal = settingsRefusal(error);
      const why =
        refusal === null
          ? undefined
          : `not retried: no retry fixes ${refusal.what}, SQLSTATE ${refusal.sqlstate}` +
            (embedded === null ? '; correct DATABASE_URL' : '');
      reportFatal(logger, error, 'the service failed to start', why);
      const listener = (await loading.catch(() => null))?.listenerThatFailed(error) ?? null;
      const hint = listenHint(error, listener, config) ?? (embedded === null ? unreachableDatabaseHint(error) : null);
      if (hint !== null) process.stderr.write(`${hint}\n`);
      // DB_POOL_MAX is a setting to change, as a configuration error's is.
      return stop.fail(error instanceof ConnectionBudgetRefusal ? 2 : 1);
    });
  // Loaded: the service started from it.
  const { seedDemoIfEmpty, InstanceRegistry } = await loading;
  const demo =
    embedded === null
      ? null
      : await stop.step(seedDemoIfEmpty(service.app)).catch((error: unknown) => {
          reportFatal(logger, error, 'the service failed to start');
          return stop.fail(1);
        });
  stop.serving();

  const banner = startupBanner({
    publicUrl: service.publicUrl,
    adminUrl: service.adminUrl,
    embeddedDataDir: embedded === null ? null : config.dataDir,
    generatedAdminToken: adminToken?.created === true ? adminToken.value : null,
    adminTokenFromSetting: config.adminToken !== null,
    instance: instanceOf(service.app.get(InstanceRegistry)),
    demo,
    // Since the process started (performance's time origin): loading the application included.
    readyInMs: Math.round(performance.now()),
  });
  // Human-facing lines go to stdout as plain text, never into the JSON log; after the log lines of the
  // start (gathered in the log's buffer), so the two keep their order.
  await flushed(logger);
  process.stdout.write(`\n${banner.join('\n')}\n\n`);
  // After the start, so the cache holds what a start compiles; the next start reads it instead.
  saveVendorCodeCache();
}

/** A setting (or the data folder's file standing in for one) that cannot be used: one plain line on stderr. */
function sayConfigurationError(error: unknown): void {
  process.stderr.write(`configuration error: ${error instanceof ConfigError ? error.message : String(error)}\n`);
}

function configOrExit(): AppConfig {
  try {
    return loadAppConfig();
  } catch (error) {
    sayConfigurationError(error);
    return process.exit(2);
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
function listenHint(error: unknown, listener: 'public' | 'admin' | null, config: AppConfig): string | null {
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
 * internal API with no settings. A file there that breaks ADMIN_TOKEN's rule
 * stops the start as a bad ADMIN_TOKEN does.
 */
function embeddedAdminTokenOrExit(config: AppConfig): { value: string; created: boolean } {
  if (config.adminToken !== null) return { value: config.adminToken, created: false };
  try {
    return ensureLocalSecret(config.dataDir, 'admin-token', 24);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    sayConfigurationError(error);
    return process.exit(2);
  }
}

function instanceOf(registry: InstanceRegistry): StartupFacts['instance'] {
  return { id: registry.id, pid: registry.pid, host: registry.host };
}

/** Resolves once the log's buffered lines are written. */
function flushed(logger: Logger): Promise<void> {
  return new Promise<void>((done) => logger.flush(() => done()));
}

/** What a stop signal does at each moment, from before the start begins until the process exits. */
interface StopOnSignals {
  /**
   * One step of the start. It resolves with the step's value; once a signal has come it never
   * resolves, so that nothing after the step begins (the stop ends the process), and a step that
   * fails then is no failed start. `closer` is what the step opened, closed on the way out before
   * whatever earlier steps opened. A stop waits SHUTDOWN_TIMEOUT_MS at most for a step, unless
   * `waitToItsEnd`: the embedded database's start, whose server would otherwise outlive the process.
   */
  step<T>(work: Promise<T>, closer?: (value: T) => () => Promise<void>, waitToItsEnd?: boolean): Promise<T>;
  /** The start is done: from now a signal is a shutdown. */
  serving(): void;
  /** A start that failed: closes what it opened (the embedded database last), then exits with `code`. */
  fail(code: number): Promise<never>;
}

const NEVER = new Promise<never>(() => undefined);

/**
 * SIGINT/SIGTERM. Once the service serves: readiness goes 503, requests and
 * deliveries drain, and the database stops last. During the start, an
 * operator's stop is not a failed start: the step under way finishes (an
 * embedded database stopped under a migration or under TypeORM's first
 * connection fails it, with a stack and a retry per connection, and the
 * start would end with whatever write failed), nothing more starts, what
 * the start opened is closed, the embedded database last, and the process
 * exits 0 as a shutdown does. A step of the service's start that outlasts
 * SHUTDOWN_TIMEOUT_MS (a database that never answers) is not waited for
 * longer; the embedded database's own start is.
 */
function stopOnSignals(logger: Logger, stepWaitMs: number): StopOnSignals {
  let signalled = false;
  let serving = false;
  let exiting = false;
  let underWay: { settled: Promise<unknown>; bounded: boolean } = { settled: Promise.resolve(), bounded: true };
  /** What the steps opened, in the order they opened it. */
  const closers: Array<() => Promise<void>> = [];

  /** Closes everything, the last opened first; the code a shutdown exits with (1 when a close failed). */
  const closeAll = async (): Promise<number> => {
    let code = 0;
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        logger.error({ error: loggableError(error) }, 'shutdown did not complete cleanly');
        code = 1;
      }
    }
    return code;
  };
  const exit = async (code: number): Promise<never> => {
    // Bounded: a stdout nobody reads must not keep a stopped service alive.
    await flushedBeforeExit(logger);
    return process.exit(code);
  };

  const shutdown = async (): Promise<never> => {
    let code = 0;
    if (!serving) {
      const finished = await Promise.race([
        underWay.settled.then(() => true),
        ...(underWay.bounded
          ? [new Promise<false>((timedOut) => setTimeout(() => timedOut(false), stepWaitMs).unref())]
          : []),
      ]);
      if (!finished) {
        logger.warn(`the start's step under way did not end within ${stepWaitMs} ms: stopping without it`);
        code = 1;
      }
    }
    code = Math.max(code, await closeAll());
    logger.info('stopped');
    return exit(code);
  };
  const onSignal = (signal: string): void => {
    if (signalled || exiting) return;
    signalled = true;
    logger.info(
      { signal },
      serving
        ? 'shutting down: readiness 503, draining requests and deliveries, then the database'
        : 'start-up stopped: the step under way finishes, nothing more starts, and the embedded database stops last',
    );
    void shutdown();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  return {
    step<T>(work: Promise<T>, closer?: (value: T) => () => Promise<void>, waitToItsEnd = false): Promise<T> {
      const opened = work.then((value) => {
        if (closer !== undefined) closers.push(closer(value));
        return value;
      });
      underWay = { settled: opened.catch(() => undefined), bounded: !waitToItsEnd };
      return opened.then(
        (value) => (signalled ? NEVER : value),
        (error: unknown) => {
          if (signalled) return NEVER;
          throw error;
        },
      );
    },
    serving(): void {
      serving = true;
    },
    async fail(code: number): Promise<never> {
      exiting = true;
      await closeAll();
      return exit(code);
    },
  };
}

void main();
