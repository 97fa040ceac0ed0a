import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminTokenProblem, ConfigError, WEBHOOK_SECRET_KEY_FORM } from './app-config';

type LocalSecretName = 'admin-token' | 'webhook-secret-key';

/**
 * Secrets the embedded default generates once and keeps in its data folder
 * (mode 0600), so a new machine needs no settings: the admin token and the
 * key that encrypts webhook secrets at rest.
 */
export function localSecret(dataDir: string, name: LocalSecretName, bytes: number): string {
  return ensureLocalSecret(dataDir, name, bytes).value;
}

/**
 * The secret, and whether this call generated it (so it can be shown once,
 * never again). A file found there is held to the rule of the setting it
 * stands in for (ADMIN_TOKEN, WEBHOOK_SECRET_KEY): an edited or truncated file
 * must stop the start with a ConfigError naming it, not open the internal
 * API to a short token or fail every webhook write later.
 */
export function ensureLocalSecret(
  dataDir: string,
  name: LocalSecretName,
  bytes: number,
): { value: string; created: boolean } {
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const file = join(dataDir, name);
  if (existsSync(file)) {
    const value = readFileSync(file, 'utf8').trim();
    const problem = localSecretProblem(file, name, value);
    if (problem !== null) throw new ConfigError(problem);
    return { value, created: false };
  }
  const value = randomBytes(bytes).toString('hex');
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return { value, created: true };
}

function localSecretProblem(file: string, name: LocalSecretName, value: string): string | null {
  if (name === 'admin-token') {
    const problem = adminTokenProblem(value, `the admin token in ${file}`);
    return problem === null
      ? null
      : `${problem}; correct it, delete the file to have a new one generated, or set ADMIN_TOKEN`;
  }
  if (WEBHOOK_SECRET_KEY_FORM.test(value)) return null;
  // Never "delete it": a new key would leave every sealed webhook secret unreadable.
  return `the webhook secret key in ${file} must be 64 hex characters (32 bytes), as WEBHOOK_SECRET_KEY must; restore the key the webhook secrets were sealed with, or set WEBHOOK_SECRET_KEY to it`;
}
