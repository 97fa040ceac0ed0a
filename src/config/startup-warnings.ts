import { isIP } from 'node:net';
import type { AppConfig } from './app-config';
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
  if (config.adminToken !== null && !isLoopback(config.adminHost)) {
    warnings.push(
      `ADMIN_HOST is ${config.adminHost}, not a loopback address: the internal API (every tenant's data behind one ` +
        'token) is reachable from the network; keep it on 127.0.0.1 behind a private tunnel or proxy',
    );
  }
  const webUrlPort = publicWebUrlOnOtherLocalPort(config);
  if (webUrlPort !== null) {
    warnings.push(
      `PUBLIC_WEB_URL is ${config.publicWebUrl}, port ${webUrlPort}, while the public API listens on port ${config.port} ` +
        "of this machine: the events' and venues' url fields, GET /v1's docs link and the API reference's server " +
        `point at port ${webUrlPort}; set PUBLIC_WEB_URL to the address clients reach this service at`,
    );
  }
  return warnings;
}

/**
 * The port of a PUBLIC_WEB_URL on this machine (a loopback host) that is not
 * the public listener's: a `PORT` moved without it, as a newcomer does when
 * 3000 is taken. A URL on another host is a proxy's or a domain's, and says
 * nothing about the port this process listens on; nor does an OS-chosen one.
 */
function publicWebUrlOnOtherLocalPort(config: AppConfig): number | null {
  if (!roleDuties(config).servesApi || config.port === 0) return null;
  const url = new URL(config.publicWebUrl);
  if (!isLoopback(url.hostname)) return null;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return port === config.port ? null : port;
}
