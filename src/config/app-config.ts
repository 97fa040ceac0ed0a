/**
 * The typed, validated settings of the service. `loadAppConfig` is the only
 * place that reads `process.env`; everything else receives an `AppConfig`.
 */
export interface AppConfig {
  /** Unset means: run an embedded PostgreSQL in `dataDir/pg`. */
  databaseUrl: string | null;
  dataDir: string;
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  /** Null until resolved; with no DATABASE_URL the bootstrap generates one. */
  adminToken: string | null;
  publicWebUrl: string;
  logLevel: string;
  /** `auto`: pretty-printed on a terminal, JSON lines otherwise (LOG_FORMAT). */
  logFormat: 'json' | 'pretty' | 'auto';
  /** How long a graceful shutdown waits for requests in flight (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  bodyLimitBytes: number;
  /** False for `npm run ops`: a one-shot command must not start delivery workers or other timers. */
  runBackgroundWork: boolean;
  rateLimit: { reads: number; writes: number; windowSeconds: number };
  webhooks: {
    allowPrivateCidrs: string[];
    pollMs: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    maxAttempts: number;
    timeoutMs: number;
    /** Key that encrypts webhook secrets at rest (hex, 32 bytes), when set. */
    secretKey: string | null;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
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

function url(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

function logFormat(env: Env): AppConfig['logFormat'] {
  const value = text(env, 'LOG_FORMAT', 'auto').toLowerCase();
  if (value !== 'json' && value !== 'pretty' && value !== 'auto') {
    throw new ConfigError(`LOG_FORMAT must be json or pretty, got "${value}"`);
  }
  return value;
}

/**
 * Production retry schedule: 12 attempts, waits of 10 minutes doubling to a
 * 12 hour cap (10m, 20m, 40m, 1h20, 2h40, 5h20, 10h40, then 12h four times),
 * about 2.9 days in all, each with ±20% jitter.
 */
export const DEFAULT_WEBHOOK_BACKOFF_BASE_MS = 600_000;
export const DEFAULT_WEBHOOK_BACKOFF_MAX_MS = 12 * 60 * 60 * 1000;
export const DEFAULT_WEBHOOK_MAX_ATTEMPTS = 12;

export function loadAppConfig(env: Env = process.env): AppConfig {
  const cidrs = optionalText(env, 'WEBHOOK_ALLOW_PRIVATE_CIDRS');
  const secretKey = optionalText(env, 'WEBHOOK_SECRET_KEY');
  if (secretKey !== null && !/^[0-9a-fA-F]{64}$/.test(secretKey)) {
    throw new ConfigError('WEBHOOK_SECRET_KEY must be 64 hex characters (32 bytes)');
  }
  return {
    databaseUrl: optionalText(env, 'DATABASE_URL'),
    dataDir: text(env, 'DATA_DIR', '.data'),
    host: text(env, 'HOST', '0.0.0.0'),
    port: integer(env, 'PORT', 3000, 0, 65535),
    adminHost: text(env, 'ADMIN_HOST', '127.0.0.1'),
    adminPort: integer(env, 'ADMIN_PORT', 3001, 0, 65535),
    adminToken: optionalText(env, 'ADMIN_TOKEN'),
    publicWebUrl: url(env, 'PUBLIC_WEB_URL', 'http://localhost:3000'),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
    logFormat: logFormat(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    runBackgroundWork: true,
    rateLimit: {
      reads: integer(env, 'RATE_LIMIT_READS', 600, 1, 10_000_000),
      writes: integer(env, 'RATE_LIMIT_WRITES', 120, 1, 10_000_000),
      windowSeconds: 60,
    },
    webhooks: {
      allowPrivateCidrs:
        cidrs === null
          ? []
          : cidrs
              .split(',')
              .map((c) => c.trim())
              .filter((c) => c !== ''),
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 1, 3_600_000),
      backoffBaseMs: integer(env, 'WEBHOOK_BACKOFF_BASE_MS', DEFAULT_WEBHOOK_BACKOFF_BASE_MS, 1, 86_400_000),
      backoffMaxMs: integer(env, 'WEBHOOK_BACKOFF_MAX_MS', DEFAULT_WEBHOOK_BACKOFF_MAX_MS, 1, 7 * 86_400_000),
      maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', DEFAULT_WEBHOOK_MAX_ATTEMPTS, 1, 1000),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
      secretKey: secretKey === null ? null : secretKey.toLowerCase(),
    },
  };
}

/** Nest injection token for the one `AppConfig` object. */
export const APP_CONFIG = Symbol('APP_CONFIG');
