import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ConfigError, type AppConfig } from '../config/app-config';
import { localSecret } from '../config/local-secrets';
import { openEmbeddedDefault, type EmbeddedDefault, type OpenEmbeddedOptions } from './embedded-default';

export interface ConfigWithDatabase {
  /** The configuration with `databaseUrl` always set. */
  config: AppConfig & { databaseUrl: string };
  /** The embedded server opened for it, or null when `DATABASE_URL` names one. */
  embedded: EmbeddedDefault | null;
}

/** A relative folder as the shell would name it from here (`./.data`); an absolute one as it is. */
function shownFolder(folder: string): string {
  return isAbsolute(folder) || /^\.\.?\//.test(folder) ? folder : `./${folder}`;
}

/**
 * Fills in what the embedded default provides when no `DATABASE_URL` is set:
 * the database's address, and the key that seals webhook secrets (generated
 * once into the data folder). The service and `npm run ops` both start here,
 * so the CLI always reaches the same database with the same key.
 */
export async function withEmbeddedDefault(
  config: AppConfig,
  log: (message: string) => void,
  options: OpenEmbeddedOptions & { existingOnly?: boolean } = {},
): Promise<ConfigWithDatabase> {
  if (config.databaseUrl !== null) return { config: { ...config, databaseUrl: config.databaseUrl }, embedded: null };
  // A command run in the wrong folder must say so, not answer from a new, empty database made there.
  if (options.existingOnly === true && !existsSync(join(config.dataDir, 'pg'))) {
    throw new ConfigError(
      `no embedded database in ${join(config.dataDir, 'pg')}: run this in the folder the service runs in (it reads ${shownFolder(config.dataDir)}), or set DATABASE_URL`,
    );
  }
  const webhooks = {
    ...config.webhooks,
    secretKey: config.webhooks.secretKey ?? localSecret(config.dataDir, 'webhook-secret-key', 32),
  };
  const embedded = await openEmbeddedDefault(config.dataDir, config.embeddedPgHome, log, {
    leaveRunningWhileUsed: options.leaveRunningWhileUsed,
    keep: options.keep,
  });
  return {
    config: { ...config, databaseUrl: embedded.url, webhooks, keepsEmbeddedServer: options.keep !== undefined },
    embedded,
  };
}
