import { isIP } from 'node:net';
import { DEFAULT_PORT, DEFAULT_PUBLIC_WEB_URL, type AppConfig } from './app-config';
import { roleDuties } from './service-role';

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || /^::ffff:127\./i.test(bare);
}

/** Settings that are valid but unwise; the service starts and logs each one. */
export function startupWarnings(config: AppConfig): string[] {
  const warnings: string[] = [];
  // The internal listener is on with ADMIN_TOKEN, and always on the embedded default (its token is kept in the data
  // folder, read after these warnings).
  const internalListenerOn = config.adminToken !== null || config.databaseUrl === null;
  if (internalListenerOn && !isLoopback(config.adminHost)) {
    warnings.push(
      `ADMIN_HOST is ${config.adminHost}, not a loopback address: the internal API (every tenant's data behind one ` +
        'token) is reachable from the network; keep it on 127.0.0.1 behind a private tunnel or proxy',
    );
  }
  if (publicWebUrlLeftBehind(config)) {
    warnings.push(
      `PUBLIC_WEB_URL is unset (${DEFAULT_PUBLIC_WEB_URL}) while the public API listens on port ${config.port}: ` +
        "the events' and venues' url fields, GET /v1's docs link and the API reference's server point at port " +
        `${DEFAULT_PORT}; set PUBLIC_WEB_URL to the address clients reach this service at`,
    );
  }
  return warnings;
}

/**
 * `PORT` moved and `PUBLIC_WEB_URL` left at its default, as a newcomer does
 * when 3000 is taken. A PUBLIC_WEB_URL that is set is the operator's word
 * (a TLS proxy, a mapped port), whatever port it names; an OS-chosen port
 * says nothing.
 */
function publicWebUrlLeftBehind(config: AppConfig): boolean {
  return (
    roleDuties(config).servesApi &&
    config.port !== 0 &&
    config.port !== DEFAULT_PORT &&
    config.publicWebUrl === DEFAULT_PUBLIC_WEB_URL
  );
}
