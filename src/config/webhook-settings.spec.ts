import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { FAILURES_BEFORE_DISABLE } from '../webhooks/webhook-event-types';
import { ConfigError, loadAppConfig } from './app-config';

const DATABASE_URL = 'postgres://service@db.example.com/events';

void describe('webhook settings', () => {
  void it('refuses to start with DATABASE_URL and no WEBHOOK_SECRET_KEY (secrets are never stored in plaintext by accident)', () => {
    assert.throws(() => loadAppConfig({ DATABASE_URL }), {
      name: 'Error',
      message: /WEBHOOK_SECRET_KEY .* is required with DATABASE_URL; set WEBHOOK_SECRETS_PLAINTEXT=1/,
    });
    assert.throws(() => loadAppConfig({ DATABASE_URL, WEBHOOK_SECRETS_PLAINTEXT: 'yes' }), ConfigError);
  });

  void it('starts without a key only when WEBHOOK_SECRETS_PLAINTEXT=1 says so, or on the embedded default', () => {
    assert.equal(loadAppConfig({ DATABASE_URL, WEBHOOK_SECRETS_PLAINTEXT: '1' }).webhooks.secretKey, null);
    assert.equal(loadAppConfig({}).webhooks.secretKey, null);
    const key = randomBytes(32).toString('hex');
    assert.equal(loadAppConfig({ DATABASE_URL, WEBHOOK_SECRET_KEY: key }).webhooks.secretKey, key);
  });

  void it('reads WEBHOOK_SECRET_KEY_PREVIOUS as a list of keys and refuses anything else', () => {
    const [a, b] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    assert.deepEqual(
      loadAppConfig({ WEBHOOK_SECRET_KEY_PREVIOUS: `${a}, ${b.toUpperCase()}` }).webhooks.previousSecretKeys,
      [a, b],
    );
    assert.throws(() => loadAppConfig({ WEBHOOK_SECRET_KEY_PREVIOUS: 'short' }), /WEBHOOK_SECRET_KEY_PREVIOUS/);
  });

  void it('defaults to the published delivery contract: a 10 s deadline, 12 attempts 10 min to 12 h apart, disabled after 20 failures', () => {
    const { webhooks } = loadAppConfig({});
    assert.equal(webhooks.timeoutMs, 10_000);
    assert.equal(webhooks.backoffBaseMs, 600_000);
    assert.equal(webhooks.backoffMaxMs, 43_200_000);
    assert.equal(webhooks.maxAttempts, 12);
    assert.equal(FAILURES_BEFORE_DISABLE, 20);
    const set = loadAppConfig({
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_BACKOFF_BASE_MS: '300',
      WEBHOOK_BACKOFF_MAX_MS: '5000',
      WEBHOOK_MAX_ATTEMPTS: '3',
    }).webhooks;
    assert.deepEqual([set.timeoutMs, set.backoffBaseMs, set.backoffMaxMs, set.maxAttempts], [2500, 300, 5000, 3]);
  });

  void it('refuses a WEBHOOK_BACKOFF_BASE_MS above WEBHOOK_BACKOFF_MAX_MS, naming both settings and their values', () => {
    assert.throws(
      () => loadAppConfig({ WEBHOOK_BACKOFF_BASE_MS: '60000', WEBHOOK_BACKOFF_MAX_MS: '1000' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          'WEBHOOK_BACKOFF_BASE_MS must be at most WEBHOOK_BACKOFF_MAX_MS, got WEBHOOK_BACKOFF_BASE_MS=60000 and WEBHOOK_BACKOFF_MAX_MS=1000',
    );
    // A default the operator never typed is named as one.
    assert.throws(
      () => loadAppConfig({ WEBHOOK_BACKOFF_MAX_MS: '1000' }),
      /got WEBHOOK_BACKOFF_BASE_MS=600000 \(its default\) and WEBHOOK_BACKOFF_MAX_MS=1000$/,
    );
    const constant = loadAppConfig({ WEBHOOK_BACKOFF_BASE_MS: '5000', WEBHOOK_BACKOFF_MAX_MS: '5000' }).webhooks;
    assert.deepEqual([constant.backoffBaseMs, constant.backoffMaxMs], [5000, 5000]);
  });

  void it('allows port 443 only by default and reads WEBHOOK_ALLOWED_PORTS', () => {
    assert.deepEqual(loadAppConfig({}).webhooks.allowedPorts, [443]);
    assert.deepEqual(loadAppConfig({ WEBHOOK_ALLOWED_PORTS: '443, 8443' }).webhooks.allowedPorts, [443, 8443]);
    for (const bad of ['0', '65536', 'https', '443;8443']) {
      assert.throws(() => loadAppConfig({ WEBHOOK_ALLOWED_PORTS: bad }), /WEBHOOK_ALLOWED_PORTS/, bad);
    }
  });

  void it('refuses a WEBHOOK_ALLOWED_PORTS of separators alone, naming it, rather than allow no port at all', () => {
    for (const bad of [',', ' , ,']) {
      assert.throws(
        () => loadAppConfig({ WEBHOOK_ALLOWED_PORTS: bad }),
        (error: unknown) =>
          error instanceof ConfigError && /^WEBHOOK_ALLOWED_PORTS must be .*at least one/.test(error.message),
        bad,
      );
    }
  });

  void it('keeps webhook history 30 days unless WEBHOOK_RETENTION_DAYS says otherwise', () => {
    assert.equal(loadAppConfig({}).webhooks.retentionDays, 30);
    assert.equal(loadAppConfig({ WEBHOOK_RETENTION_DAYS: '7' }).webhooks.retentionDays, 7);
    assert.throws(() => loadAppConfig({ WEBHOOK_RETENTION_DAYS: '0' }), /WEBHOOK_RETENTION_DAYS/);
  });
});
