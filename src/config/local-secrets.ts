import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Secrets the embedded default generates once and keeps in its data folder
 * (mode 0600), so a new machine needs no settings: the admin token and the
 * key that encrypts webhook secrets at rest.
 */
export function localSecret(dataDir: string, name: 'admin-token' | 'webhook-secret-key', bytes: number): string {
  return ensureLocalSecret(dataDir, name, bytes).value;
}

/** The secret, and whether this call generated it (so it can be shown once, never again). */
export function ensureLocalSecret(
  dataDir: string,
  name: 'admin-token' | 'webhook-secret-key',
  bytes: number,
): { value: string; created: boolean } {
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const file = join(dataDir, name);
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), created: false };
  const value = randomBytes(bytes).toString('hex');
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return { value, created: true };
}
