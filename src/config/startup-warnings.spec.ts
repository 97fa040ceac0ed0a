import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadAppConfig } from './app-config';
import { ensureLocalSecret } from './local-secrets';
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

describe('an admin token a Bearer header can carry (visible ASCII)', () => {
  it('refuses an ADMIN_TOKEN with a space, a control or a non-ASCII character, naming ADMIN_TOKEN', () => {
    for (const token of [
      `${'a'.repeat(20)} ${'b'.repeat(20)}`,
      `${'a'.repeat(31)}é`,
      `${'a'.repeat(16)}\t${'b'.repeat(16)}`,
      `${'a'.repeat(32)}\u007f`,
    ]) {
      assert.throws(
        () => loadAppConfig({ ADMIN_TOKEN: token }),
        (error: unknown) =>
          error instanceof ConfigError && /^ADMIN_TOKEN must be made of visible ASCII characters/.test(error.message),
        token,
      );
    }
  });

  it('keeps accepting every visible ASCII token of 32 characters or more, as the bearer parser reads it', () => {
    for (const token of [TOKEN, `${'A9-._~+/'.repeat(4)}==`, `p@ss!word#${'x'.repeat(24)}"=`, `=${TOKEN}`])
      assert.equal(loadAppConfig({ ADMIN_TOKEN: token }).adminToken, token);
  });

  it('holds the data folder’s admin-token file to ADMIN_TOKEN’s rule, naming the file', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'admin-token-file-'));
    try {
      for (const content of ['short\n', '', `${'a'.repeat(20)} ${'b'.repeat(20)}\n`, `${'é'.repeat(32)}\n`]) {
        writeFileSync(join(dataDir, 'admin-token'), content);
        assert.throws(
          () => ensureLocalSecret(dataDir, 'admin-token', 24),
          (error: unknown) =>
            error instanceof ConfigError &&
            error.message.startsWith(`the admin token in ${join(dataDir, 'admin-token')} must be`) &&
            !error.message.includes('\n'),
          JSON.stringify(content),
        );
      }
      writeFileSync(join(dataDir, 'admin-token'), `${TOKEN}\n`);
      assert.deepEqual(ensureLocalSecret(dataDir, 'admin-token', 24), { value: TOKEN, created: false });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('holds the data folder’s webhook-secret-key file to WEBHOOK_SECRET_KEY’s rule (64 hex characters), naming the file', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'webhook-key-file-'));
    try {
      for (const content of ['zzz\n', '', `${'a'.repeat(63)}\n`, `${'g'.repeat(64)}\n`]) {
        writeFileSync(join(dataDir, 'webhook-secret-key'), content);
        assert.throws(
          () => ensureLocalSecret(dataDir, 'webhook-secret-key', 32),
          (error: unknown) =>
            error instanceof ConfigError &&
            error.message.startsWith(
              `the webhook secret key in ${join(dataDir, 'webhook-secret-key')} must be 64 hex characters`,
            ),
          JSON.stringify(content),
        );
      }
      const key = 'ab'.repeat(32);
      writeFileSync(join(dataDir, 'webhook-secret-key'), `${key}\n`);
      assert.equal(ensureLocalSecret(dataDir, 'webhook-secret-key', 32).value, key);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
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
    const noToken = {
      ADMIN_HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://service@db.internal/events',
      WEBHOOK_SECRETS_PLAINTEXT: '1',
    };
    assert.deepEqual(startupWarnings(loadAppConfig(noToken)), []);
  });

  it('warns on the embedded default too, whose token is kept in the data folder rather than set', () => {
    const warnings = startupWarnings(loadAppConfig({ ADMIN_HOST: '0.0.0.0' }));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /ADMIN_HOST is 0\.0\.0\.0, not a loopback address/);
  });

  it('warns when PORT moves the public API and PUBLIC_WEB_URL is left at its default, naming both', () => {
    const [warning, ...more] = startupWarnings(loadAppConfig({ PORT: '3100' }));
    assert.deepEqual(more, []);
    assert.match(
      warning ?? '',
      /^PUBLIC_WEB_URL is unset \(http:\/\/localhost:3000\) while the public API listens on port 3100/,
    );
    assert.match(warning ?? '', /set PUBLIC_WEB_URL/);
  });

  it('stays quiet for a PUBLIC_WEB_URL that is set (a TLS proxy, a mapped port), on the default port, an OS-chosen one, or a worker', () => {
    const quiet = [
      {},
      { PORT: '3100', PUBLIC_WEB_URL: 'http://localhost:3100' },
      { PORT: '3000', PUBLIC_WEB_URL: 'https://localhost' },
      { PORT: '3000', PUBLIC_WEB_URL: 'http://localhost:8080' },
      { PORT: '3100', PUBLIC_WEB_URL: 'https://events.example.com' },
      { PORT: '0' },
      { PORT: '3100', SERVICE_ROLE: 'worker', ADMIN_TOKEN: TOKEN },
    ];
    for (const settings of quiet)
      assert.deepEqual(startupWarnings(loadAppConfig(settings)), [], JSON.stringify(settings));
  });
});
