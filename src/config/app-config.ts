import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import { DEFAULT_RETRY_SCHEDULE } from '../../libs/webhooks/retry-backoff';

/** PORT when unset: the public listener's. */
export const DEFAULT_PORT = 3000;
/** PUBLIC_WEB_URL when unset: the public listener at its default port on this machine. */
export const DEFAULT_PUBLIC_WEB_URL = 'http://localhost:3000';
/** DB_POOL_MAX when unset: the connections an instance's pool may open. */
export const DEFAULT_DB_POOL_MAX = 20;
/** DB_CONNECT_TIMEOUT_SECONDS when unset: how long a statement waits for a connection. */
export const DEFAULT_DB_CONNECT_TIMEOUT_SECONDS = 10;
/** How long a statement may wait for the database's answer once sent (DB_STATEMENT_TIMEOUT_SECONDS). */
export const DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS = 30;

/**
 * The typed, validated settings of the service. `loadAppConfig` is the only
 * place that reads `process.env`; everything else receives an `AppConfig`.
 */
export interface AppConfig {
  /** Unset means: run an embedded PostgreSQL in `dataDir/pg`. */
  databaseUrl: string | null;
  dataDir: string;
  /** As root: where the embedded server's binaries and cluster go when the postgres OS user cannot reach them. */
  embeddedPgHome: string;
  /**
   * Set by withEmbeddedDefault for the service on its data folder's embedded server: it holds one
   * connection outside its pool, the server's keeper (src/database/embedded-keeper.ts), and every
   * instance on that database runs on this machine.
   */
  keepsEmbeddedServer: boolean;
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  /** Null until resolved; with no DATABASE_URL the bootstrap generates one. */
  adminToken: string | null;
  publicWebUrl: string;
  logLevel: LogLevel;
  /** `auto`: pretty-printed on a terminal, JSON lines otherwise (LOG_FORMAT). */
  logFormat: 'json' | 'pretty' | 'auto';
  /** How long a graceful shutdown waits for requests in flight (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  /** How long both listeners keep an idle keep-alive connection open (KEEP_ALIVE_TIMEOUT_SECONDS). */
  keepAliveTimeoutMs: number;
  bodyLimitBytes: number;
  /** False for `npm run ops`: a one-shot command must not start delivery workers or other timers. */
  runBackgroundWork: boolean;
  /**
   * `apply`: pending migrations are applied at start (the service). `refuse-pending`: a schema behind
   * this build stops the start instead (`npm run ops`: a command must not change the schema under
   * instances of the old build still serving it).
   */
  schemaMigrations: 'apply' | 'refuse-pending';
  /** What this instance does (SERVICE_ROLE); see src/config/service-role.ts for what each role runs. */
  serviceRole: ServiceRole;
  /**
   * `failuresPerClient`: 401s and unknown routes per client address per window; 0 turns it off.
   * `store` (RATE_LIMIT_STORE): where account budgets are counted; `database` is shared by every instance.
   */
  rateLimit: {
    reads: number;
    writes: number;
    failuresPerClient: number;
    windowSeconds: number;
    store: RateLimitStore;
  };
  /** Connections this instance's pool may open (DB_POOL_MAX); checked against the server at start. */
  dbPoolMax: number;
  /**
   * How long a statement waits for a connection (DB_CONNECT_TIMEOUT_SECONDS): a new one to finish its
   * start-up, or one of the pool's to come free. Without it, a database that accepts connections but never
   * answers hangs the start, and every request, with nothing said.
   */
  dbConnectTimeoutMs: number;
  /**
   * How long a statement sent through the SQL kit waits for its answer
   * (DB_STATEMENT_TIMEOUT_SECONDS): past it, the statement fails and its
   * connection is closed, so a database that goes silent on an open
   * connection fails requests instead of holding them for ever.
   */
  dbStatementTimeoutMs: number;
  /**
   * SCHEDULED_JOB_PERIOD_SECONDS: one period for every scheduled job instead of each job's own (test rigs,
   * and operators who want the purges more often); null keeps each job's own period.
   */
  scheduledJobPeriodMs: number | null;
  /** CIDRs (or addresses) whose `X-Forwarded-For` is believed when the client address is taken. */
  trustedProxies: string[];
  /**
   * The webhook portal: where its links point (PORTAL_URL) and who may frame it (PORTAL_FRAME_ANCESTORS).
   * `url` is null on a `worker` without PORTAL_URL: it serves no portal, so no default address is true.
   */
  portal: { url: string | null; frameAncestors: string[] };
  /** Bound of the in-process API-key lookup cache (API_KEY_CACHE_MAX_ENTRIES); 0 turns the cache off. */
  apiKeyCacheMaxEntries: number;
  webhooks: {
    allowPrivateCidrs: string[];
    pollMs: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    maxAttempts: number;
    timeoutMs: number;
    /**
     * Key that encrypts webhook secrets at rest (hex, 32 bytes), when set. Null stores them unsealed, which
     * with a DATABASE_URL only WEBHOOK_SECRETS_PLAINTEXT=1 allows (loadAppConfig refuses to start otherwise).
     */
    secretKey: string | null;
    /** Earlier keys (WEBHOOK_SECRET_KEY_PREVIOUS): secrets sealed under them still open, until re-sealed. */
    previousSecretKeys: string[];
    /** Ports a subscription URL may name (WEBHOOK_ALLOWED_PORTS). */
    allowedPorts: number[];
    /**
     * Days final deliveries, their attempts, warnings and deleted subscriptions (once none of their
     * deliveries is pending) are kept (WEBHOOK_RETENTION_DAYS).
     */
    retentionDays: number;
  };
}

export class ConfigError extends Error {}

export type RateLimitStore = 'database' | 'memory';

/**
 * `all`: everything; `api`: both listeners, no delivery worker and no
 * scheduled jobs; `worker`: the delivery worker and the scheduled jobs, with
 * only the admin listener (probes and metrics).
 */
export const SERVICE_ROLES = ['all', 'api', 'worker'] as const;
export type ServiceRole = (typeof SERVICE_ROLES)[number];

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  // One message for a value that is no whole number (-3, 1.5, ten) and one out of range: what is allowed.
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function text(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? fallback : raw.trim();
}

function optionalText(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

/**
 * A PostgreSQL connection string in one of the forms node-postgres reads: a
 * `postgres://` or `postgresql://` URL, a `socket:` URL, or a socket folder
 * path. Anything else (a bare word, an http URL, a typo in the scheme) would
 * be read as a host name and retried for half a minute before failing with
 * a DNS error; it stops the start at once instead. The value itself is never
 * printed: it usually holds a password.
 */
function databaseUrl(env: Env): string | null {
  const value = optionalText(env, 'DATABASE_URL');
  if (value === null || value.startsWith('/')) return value;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') {
    if (URL.canParse(value) || URL.canParse(value.replace('@/', '@host/'))) return value;
  } else if (scheme === 'socket' && URL.canParse(value)) {
    return value;
  }
  throw new ConfigError(
    `DATABASE_URL must be a PostgreSQL connection string such as postgres://user:password@host:5432/database (${
      scheme === undefined ? 'it has no scheme' : `the value given starts with "${scheme}:"`
    })`,
  );
}

/** A comma-separated list of addresses or CIDRs, each checked so a typo stops the start instead of trusting nothing. */
function cidrList(env: Env, name: string): string[] {
  const raw = optionalText(env, name);
  if (raw === null) return [];
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const maxBits = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : -1;
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (maxBits === -1 || !bitsOk || rest.length > 0) {
      throw new ConfigError(`${name} must list IP addresses or CIDRs separated by commas, got "${entry}"`);
    }
  }
  return entries;
}

/**
 * A base URL the service writes more onto: paths (`/events/{id}`), or a
 * fragment (`#token=…`). So never credentials, which every link would carry;
 * never a fragment, which would swallow what follows it; and a query only
 * where `query` allows it (after a query, an added path would be query text).
 */
function url(env: Env, name: string, fallback: string, { query }: { query: 'allowed' | 'refused' }): string {
  const value = text(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  }
  const without = query === 'allowed' ? 'credentials or a fragment' : 'credentials, a query or a fragment';
  const refused =
    parsed.username !== '' ||
    parsed.password !== '' ||
    value.includes('#') ||
    (query === 'refused' && value.includes('?'));
  if (refused) throw new ConfigError(`${name} must be an http(s) URL without ${without}, got "${value}"`);
  return value.replace(/\/+$/, '');
}

// A URL parser lets `;`, `,` and quotes through in a host, and in a CSP header `;` starts another directive:
// only the characters of DNS names, IPv4 and bracketed IPv6 addresses may reach the policy.
const CSP_HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/;

/**
 * Origins allowed to frame the portal, as CSP `frame-ancestors` sources:
 * scheme, host and optional port, nothing else (a path, a wildcard scheme
 * or a keyword would widen or break the policy). Each is written to the
 * policy as the URL parser normalises it: any case, a default port and a
 * trailing slash are the same origin.
 */
function frameAncestors(env: Env): string[] {
  const raw = optionalText(env, 'PORTAL_FRAME_ANCESTORS');
  if (raw === null) return [];
  return raw.split(/\s+/).map((origin) => {
    let parsed: URL | null;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = null;
    }
    if (
      parsed === null ||
      (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
      parsed.username !== '' ||
      parsed.password !== '' ||
      parsed.pathname !== '/' ||
      origin.includes('?') ||
      origin.includes('#') ||
      !CSP_HOST.test(parsed.hostname)
    ) {
      throw new ConfigError(
        `PORTAL_FRAME_ANCESTORS must be space-separated origins such as https://app.example.com, got "${origin}"`,
      );
    }
    return parsed.origin;
  });
}

function list(env: Env, name: string, fallback: string): string[] {
  return text(env, name, fallback)
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** `database` by default when DATABASE_URL names a shared server; the embedded default counts in memory. */
function rateLimitStore(env: Env): RateLimitStore {
  const fallback = optionalText(env, 'DATABASE_URL') === null ? 'memory' : 'database';
  const value = text(env, 'RATE_LIMIT_STORE', fallback).toLowerCase();
  if (value !== 'database' && value !== 'memory') {
    throw new ConfigError(`RATE_LIMIT_STORE must be database or memory, got "${value}"`);
  }
  return value;
}

/**
 * A worker serves no public listener, so the admin listener is its only way
 * to be probed and scraped: without ADMIN_TOKEN (and outside the embedded
 * default, which generates one) it would run unobserved, so it does not start.
 */
function serviceRole(env: Env, adminToken: string | null): ServiceRole {
  const value = text(env, 'SERVICE_ROLE', 'all').toLowerCase();
  const role = SERVICE_ROLES.find((known) => known === value);
  if (role === undefined) throw new ConfigError(`SERVICE_ROLE must be all, api or worker, got "${value}"`);
  if (role === 'worker' && adminToken === null && optionalText(env, 'DATABASE_URL') !== null) {
    throw new ConfigError(
      'SERVICE_ROLE=worker needs the admin listener (its only listener, for probes and metrics): set ADMIN_TOKEN',
    );
  }
  return role;
}

/** Unset keeps each job's own period; a day at most, since the longest job's own period is an hour. */
function scheduledJobPeriodMs(env: Env): number | null {
  if (optionalText(env, 'SCHEDULED_JOB_PERIOD_SECONDS') === null) return null;
  return integer(env, 'SCHEDULED_JOB_PERIOD_SECONDS', 0, 1, 86_400) * 1000;
}

/** pino's own levels: its logger throws a stack trace at any other name, after the start has begun. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function logLevel(env: Env): LogLevel {
  const value = text(env, 'LOG_LEVEL', 'info').toLowerCase();
  const level = LOG_LEVELS.find((known) => known === value);
  if (level === undefined) {
    throw new ConfigError(`LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, got "${value}"`);
  }
  return level;
}

/**
 * What a listener may bind: an IP address or a host name. Anything else would
 * pass this point and fail only at listen, after the database has started,
 * as a DNS error that names neither listener nor setting. A host whose last
 * label is a number is an IPv4 address to every parser (URLs, inet_aton), so
 * it must be a valid one: `999.1.1.1` or `10.1` is a typo, not a name.
 * Underscores are let through: container platforms name hosts with them and
 * the resolver finds those names.
 */
/** A listen host that means every address of the machine (`0.0.0.0`, `::`). */
export function listensOnEveryAddress(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

function listenHost(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  if (isIP(value) !== 0) return value;
  const labels = value.replace(/\.$/, '').split('.');
  if (/^(?:\d+|0x[0-9a-f]*)$/i.test(labels[labels.length - 1] ?? '')) {
    throw new ConfigError(`${name} must be an IP address or a host name, got "${value}" (not a valid IPv4 address)`);
  }
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/i;
  if (value.length > 253 || !labels.every((part) => label.test(part))) {
    throw new ConfigError(`${name} must be an IP address or a host name, got "${value}"`);
  }
  return value;
}

function logFormat(env: Env): AppConfig['logFormat'] {
  const value = text(env, 'LOG_FORMAT', 'auto').toLowerCase();
  if (value !== 'json' && value !== 'pretty' && value !== 'auto') {
    throw new ConfigError(`LOG_FORMAT must be json, pretty or auto, got "${value}"`);
  }
  return value;
}

/** The form of WEBHOOK_SECRET_KEY (and of the data folder's key file): 32 bytes, hex. */
export const WEBHOOK_SECRET_KEY_FORM = /^[0-9a-fA-F]{64}$/;

/**
 * Webhook secrets must be sealed at rest whenever the database is not the
 * embedded one (which generates its own key): an insecure default must be a
 * decision (WEBHOOK_SECRETS_PLAINTEXT=1), never an accident.
 */
function webhookSecretSettings(env: Env, secretKey: string | null): { previousSecretKeys: string[] } {
  const secretsPlaintext = text(env, 'WEBHOOK_SECRETS_PLAINTEXT', '0') === '1';
  if (optionalText(env, 'DATABASE_URL') !== null && secretKey === null && !secretsPlaintext) {
    throw new ConfigError(
      'WEBHOOK_SECRET_KEY (64 hex characters) is required with DATABASE_URL; set WEBHOOK_SECRETS_PLAINTEXT=1 to store webhook secrets unencrypted on purpose',
    );
  }
  const previousSecretKeys = list(env, 'WEBHOOK_SECRET_KEY_PREVIOUS', '').map((key) => {
    if (!WEBHOOK_SECRET_KEY_FORM.test(key)) {
      throw new ConfigError('WEBHOOK_SECRET_KEY_PREVIOUS must be comma-separated keys of 64 hex characters');
    }
    return key.toLowerCase();
  });
  return { previousSecretKeys };
}

/**
 * Production retry schedule, defined once in libs/webhooks (DEFAULT_RETRY_SCHEDULE):
 * 12 attempts, waits of 10 minutes doubling to a 12 hour cap, about 2.9 days in all.
 */
export const DEFAULT_WEBHOOK_BACKOFF_BASE_MS = DEFAULT_RETRY_SCHEDULE.baseMs;
export const DEFAULT_WEBHOOK_BACKOFF_MAX_MS = DEFAULT_RETRY_SCHEDULE.maxMs;
export const DEFAULT_WEBHOOK_MAX_ATTEMPTS = DEFAULT_RETRY_SCHEDULE.maxAttempts;

export const DEFAULT_EMBEDDED_PG_HOME = '/var/lib/events-api';

/** EMBEDDED_PG_HOME: an absolute path, since the service changes modes inside it and must know where it is. */
export function embeddedPgHome(env: Env): string {
  const home = optionalText(env, 'EMBEDDED_PG_HOME');
  if (home === null) return DEFAULT_EMBEDDED_PG_HOME;
  if (!isAbsolute(home)) throw new ConfigError(`EMBEDDED_PG_HOME must be an absolute path, got "${home}"`);
  return home;
}

/**
 * A retry waits `min(base × 2^(attempt-1), max)`: with the base above the
 * cap every wait would be the cap, and WEBHOOK_BACKOFF_BASE_MS would be
 * ignored without a word.
 */
function webhookBackoff(env: Env): { backoffBaseMs: number; backoffMaxMs: number } {
  const backoffBaseMs = integer(env, 'WEBHOOK_BACKOFF_BASE_MS', DEFAULT_WEBHOOK_BACKOFF_BASE_MS, 1, 86_400_000);
  const backoffMaxMs = integer(env, 'WEBHOOK_BACKOFF_MAX_MS', DEFAULT_WEBHOOK_BACKOFF_MAX_MS, 1, 7 * 86_400_000);
  if (backoffBaseMs > backoffMaxMs) {
    // One of the two may be the default, which the operator never typed.
    const shown = (name: string, value: number): string =>
      `${name}=${value}${optionalText(env, name) === null ? ' (its default)' : ''}`;
    throw new ConfigError(
      `WEBHOOK_BACKOFF_BASE_MS must be at most WEBHOOK_BACKOFF_MAX_MS, got ${shown('WEBHOOK_BACKOFF_BASE_MS', backoffBaseMs)} and ${shown('WEBHOOK_BACKOFF_MAX_MS', backoffMaxMs)}`,
    );
  }
  return { backoffBaseMs, backoffMaxMs };
}

/**
 * WEBHOOK_ALLOWED_PORTS: at least one port. A value of separators alone (`,`)
 * would be an empty list, with which no subscription can ever be created: a
 * typo to refuse, not a setting to obey.
 */
function allowedPorts(env: Env): number[] {
  const ports = list(env, 'WEBHOOK_ALLOWED_PORTS', '443');
  if (ports.length === 0) {
    throw new ConfigError(
      `WEBHOOK_ALLOWED_PORTS must be comma-separated ports (1-65535), at least one, got "${text(env, 'WEBHOOK_ALLOWED_PORTS', '')}"`,
    );
  }
  return ports.map((port) => {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      throw new ConfigError(`WEBHOOK_ALLOWED_PORTS must be comma-separated ports (1-65535), got "${port}"`);
    }
    return Number(port);
  });
}

/** The admin token opens every tenant: long enough that guessing is out of reach. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/**
 * Visible ASCII, what the bearer parser reads as one token and what every
 * client sends byte for byte: a token with a space can never match it, and
 * one with a non-ASCII character (whose bytes depend on the client's
 * encoding) works from one client and not from another. Refused at start
 * rather than found out as 401s. Not narrowed to RFC 6750's token68: a token
 * with `@` or `!` has always worked, and a start must not refuse it now.
 */
const BEARER_TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

/**
 * Why `token` cannot be the admin token, or null when it can. `source` names
 * where it came from (the setting, or the data folder's file), since the same
 * rule holds for both and the operator must know which to correct.
 */
export function adminTokenProblem(token: string, source: string): string | null {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    return `${source} must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (it guards every tenant)`;
  }
  if (!BEARER_TOKEN_CHARACTERS.test(token)) {
    return `${source} must be made of visible ASCII characters, with no space and no other character, or no client can send it reliably as a Bearer token`;
  }
  return null;
}

export function loadAppConfig(env: Env = process.env): AppConfig {
  const secretKey = optionalText(env, 'WEBHOOK_SECRET_KEY');
  if (secretKey !== null && !WEBHOOK_SECRET_KEY_FORM.test(secretKey)) {
    throw new ConfigError('WEBHOOK_SECRET_KEY must be 64 hex characters (32 bytes)');
  }
  const adminToken = optionalText(env, 'ADMIN_TOKEN');
  const adminTokenRefused = adminToken === null ? null : adminTokenProblem(adminToken, 'ADMIN_TOKEN');
  if (adminTokenRefused !== null) throw new ConfigError(adminTokenRefused);
  const webhookSecrets = webhookSecretSettings(env, secretKey);
  const port = integer(env, 'PORT', DEFAULT_PORT, 0, 65535);
  const role = serviceRole(env, adminToken);
  return {
    databaseUrl: databaseUrl(env),
    dataDir: text(env, 'DATA_DIR', '.data'),
    embeddedPgHome: embeddedPgHome(env),
    keepsEmbeddedServer: false,
    host: listenHost(env, 'HOST', '0.0.0.0'),
    port,
    adminHost: listenHost(env, 'ADMIN_HOST', '127.0.0.1'),
    adminPort: integer(env, 'ADMIN_PORT', 3001, 0, 65535),
    adminToken,
    publicWebUrl: url(env, 'PUBLIC_WEB_URL', DEFAULT_PUBLIC_WEB_URL, { query: 'refused' }),
    logLevel: logLevel(env),
    logFormat: logFormat(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    // Above the idle timeout of the load balancer in front (see listener-server.ts).
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_SECONDS', 72, 1, 3600) * 1000,
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    runBackgroundWork: true,
    schemaMigrations: 'apply',
    serviceRole: role,
    rateLimit: {
      reads: integer(env, 'RATE_LIMIT_READS', 600, 1, 10_000_000),
      writes: integer(env, 'RATE_LIMIT_WRITES', 120, 1, 10_000_000),
      failuresPerClient: integer(env, 'RATE_LIMIT_FAILURES_PER_CLIENT', 100, 0, 10_000_000),
      windowSeconds: 60,
      store: rateLimitStore(env),
    },
    // At least two: a request's statement and a background job's must not wait on each other.
    dbPoolMax: integer(env, 'DB_POOL_MAX', DEFAULT_DB_POOL_MAX, 2, 10_000),
    dbConnectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_SECONDS', DEFAULT_DB_CONNECT_TIMEOUT_SECONDS, 1, 600) * 1000,
    dbStatementTimeoutMs:
      integer(env, 'DB_STATEMENT_TIMEOUT_SECONDS', DEFAULT_DB_STATEMENT_TIMEOUT_SECONDS, 1, 3600) * 1000,
    scheduledJobPeriodMs: scheduledJobPeriodMs(env),
    trustedProxies: cidrList(env, 'TRUSTED_PROXIES'),
    portal: {
      url:
        role === 'worker' && optionalText(env, 'PORTAL_URL') === null
          ? null
          : url(env, 'PORTAL_URL', `http://localhost:${port}/portal`, { query: 'allowed' }),
      frameAncestors: frameAncestors(env),
    },
    apiKeyCacheMaxEntries: integer(env, 'API_KEY_CACHE_MAX_ENTRIES', 10_000, 0, 1_000_000),
    webhooks: {
      allowPrivateCidrs: cidrList(env, 'WEBHOOK_ALLOW_PRIVATE_CIDRS'),
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 1, 3_600_000),
      ...webhookBackoff(env),
      maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', DEFAULT_WEBHOOK_MAX_ATTEMPTS, 1, 1000),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
      secretKey: secretKey === null ? null : secretKey.toLowerCase(),
      ...webhookSecrets,
      allowedPorts: allowedPorts(env),
      retentionDays: integer(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    },
  };
}

/** Nest injection token for the one `AppConfig` object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
