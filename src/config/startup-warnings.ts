import { isIP } from 'node:net';
import type { AppConfig } from './app-config';

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || /^::ffff:127\./i.test(bare);
}

/** Settings that are valid but unwise; the service starts and logs each one. */
export function startupWarnings(config: AppConfig): string[] {
  const warnings: string[] = [];
  if (config.adminToken !== null && !isLoopback(config.adminHost)) {
    warnings.push(
      `ADMIN_HOST is ${config.adminHost}, not a loopback address: the internal API (every tenant's data behind one ` +
        'token) is reachable from the network; keep it on 127.0.0.1 behind a private tunnel or proxy',
    );
  }
  return warnings;
}
