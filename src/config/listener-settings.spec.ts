import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';

/** Each value of the setting stops the start with a ConfigError that names the setting and the value. */
function assertRefused(name: string, values: readonly string[], reason: RegExp): void {
  for (const bad of values) {
    assert.throws(
      () => loadAppConfig({ [name]: bad }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(`${name} must be an IP address or a host name, got "${bad}"`) &&
        reason.test(error.message),
      `${name}=${bad}`,
    );
  }
}

void describe('HOST and ADMIN_HOST', () => {
  void it('take an IP address or a host name (a name that does not resolve is found at listen, not here)', () => {
    for (const host of [
      '0.0.0.0',
      '127.0.0.1',
      '::',
      '::1',
      'fe80::1%eth0',
      'localhost',
      'events-api',
      'not-a-host',
      'db.internal.example.com',
      'events-api.svc.cluster.local.',
      'events_api_1',
      '3com.example',
    ]) {
      assert.equal(loadAppConfig({ HOST: host }).host, host, host);
      assert.equal(loadAppConfig({ ADMIN_HOST: host }).adminHost, host, host);
    }
    assert.equal(loadAppConfig({}).host, '0.0.0.0');
    assert.equal(loadAppConfig({}).adminHost, '127.0.0.1');
  });

  void it('refuse at start dotted numbers that are no IPv4 address (999.1.1.1, 10.1), naming the setting', () => {
    for (const name of ['HOST', 'ADMIN_HOST']) {
      assertRefused(name, ['999.1.1.1', '10.1', '1.2.3.4.5', '256.0.0.1', '2130706433', 'host.0x7f'], /IPv4/);
    }
  });

  void it('refuse at start a value that is neither an IP address nor a host name, naming the setting', () => {
    for (const name of ['HOST', 'ADMIN_HOST']) {
      assertRefused(
        name,
        [
          'not a host',
          '[::1]',
          'http://localhost',
          'localhost:3000',
          '-events',
          'events-',
          'a..b',
          `${'a'.repeat(64)}.com`,
        ],
        /./,
      );
    }
  });
});
