import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';
import { startupWarnings } from './startup-warnings';

const TOKEN = 'a'.repeat(32);

describe('ADMIN_TOKEN of at least 32 characters', () => {
  it('stops at start with a message naming ADMIN_TOKEN when it is shorter', () => {
    for (const token of ['a', 'x'.repeat(31)]) {
      assert.throws(
        () => loadAppConfig({ ADMIN_TOKEN: token }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /ADMIN_TOKEN must be at least 32 characters/);
          return true;
        },
      );
    }
    assert.equal(loadAppConfig({ ADMIN_TOKEN: TOKEN }).adminToken, TOKEN);
  });
});

describe('a warning when ADMIN_HOST is not loopback', () => {
  it('warns for an address others can reach, naming ADMIN_HOST', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'admin.example.com']) {
      const warnings = startupWarnings(loadAppConfig({ ADMIN_TOKEN: TOKEN, ADMIN_HOST: host }));
      assert.equal(warnings.length, 1, host);
      assert.match(warnings[0] ?? '', /ADMIN_HOST/);
    }
  });

  it('stays quiet on loopback, and when the internal listener is off', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) {
      assert.deepEqual(startupWarnings(loadAppConfig({ ADMIN_TOKEN: TOKEN, ADMIN_HOST: host })), [], host);
    }
    assert.deepEqual(startupWarnings(loadAppConfig({ ADMIN_HOST: '0.0.0.0' })), []);
  });
});
