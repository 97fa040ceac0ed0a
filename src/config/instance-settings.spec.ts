import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';

const DATABASE_URL = 'postgres://service@db.example.com/events';
const WITH_DATABASE = { DATABASE_URL, WEBHOOK_SECRETS_PLAINTEXT: '1' };

/** Each value of the setting stops the start with a ConfigError that names the setting. */
function assertRefused(name: string, values: readonly string[]): void {
  for (const bad of values) {
    assert.throws(
      () => loadAppConfig({ [name]: bad }),
      (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name} must be`),
      bad,
    );
  }
}

describe('settings of several instances', () => {
  it('counts account budgets in the database by default with DATABASE_URL, and in memory on the embedded default', () => {
    assert.equal(loadAppConfig(WITH_DATABASE).rateLimit.store, 'database');
    assert.equal(loadAppConfig({}).rateLimit.store, 'memory');
  });

  it('takes RATE_LIMIT_STORE=memory or database as an explicit choice', () => {
    assert.equal(loadAppConfig({ ...WITH_DATABASE, RATE_LIMIT_STORE: 'memory' }).rateLimit.store, 'memory');
    assert.equal(loadAppConfig({ RATE_LIMIT_STORE: 'Database' }).rateLimit.store, 'database');
  });

  it('refuses to start with a RATE_LIMIT_STORE other than database or memory, naming the variable', () => {
    for (const bad of ['redis', 'db', 'memory,database']) {
      assert.throws(
        () => loadAppConfig({ ...WITH_DATABASE, RATE_LIMIT_STORE: bad }),
        (error: unknown) =>
          error instanceof ConfigError && /RATE_LIMIT_STORE must be database or memory/.test(error.message),
        bad,
      );
    }
  });

  it('keeps idle connections KEEP_ALIVE_TIMEOUT_SECONDS (default 72, above a load balancer’s 60) and refuses anything but 1 to 3600 whole seconds', () => {
    assert.equal(loadAppConfig({}).keepAliveTimeoutMs, 72_000);
    assert.equal(loadAppConfig({ KEEP_ALIVE_TIMEOUT_SECONDS: '620' }).keepAliveTimeoutMs, 620_000);
    assertRefused('KEEP_ALIVE_TIMEOUT_SECONDS', ['0', '-5', '7.5', 'long', '3601']);
  });

  it('sizes the pool with DB_POOL_MAX (default 20) and refuses anything but a whole number of at least 2', () => {
    assert.equal(loadAppConfig({}).dbPoolMax, 20);
    assert.equal(loadAppConfig({ DB_POOL_MAX: '5' }).dbPoolMax, 5);
    assertRefused('DB_POOL_MAX', ['1', '0', '-3', '2.5', 'twenty', '100000']);
  });

  it('names the whole numbers a setting takes when it is refused, negative, fractional, no number or out of range alike', () => {
    for (const bad of ['-3', '2.5', 'twenty', '1', '100000']) {
      assert.throws(
        () => loadAppConfig({ DB_POOL_MAX: bad }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message === `DB_POOL_MAX must be a whole number from 2 to 10000, got "${bad}"`,
        bad,
      );
    }
  });

  it('waits DB_CONNECT_TIMEOUT_SECONDS (default 10) for a database connection and refuses anything but 1 to 600 whole seconds', () => {
    assert.equal(loadAppConfig({}).dbConnectTimeoutMs, 10_000);
    assert.equal(loadAppConfig({ DB_CONNECT_TIMEOUT_SECONDS: '3' }).dbConnectTimeoutMs, 3_000);
    assertRefused('DB_CONNECT_TIMEOUT_SECONDS', ['0', '-1', '1.5', 'never', '601']);
  });

  it('waits DB_STATEMENT_TIMEOUT_SECONDS (default 30) for a statement’s answer and refuses anything but 1 to 3600 whole seconds', () => {
    assert.equal(loadAppConfig({}).dbStatementTimeoutMs, 30_000);
    assert.equal(loadAppConfig({ DB_STATEMENT_TIMEOUT_SECONDS: '5' }).dbStatementTimeoutMs, 5_000);
    assertRefused('DB_STATEMENT_TIMEOUT_SECONDS', ['0', '-1', '1.5', 'never', '3601']);
  });

  it('SCHEDULED_JOB_PERIOD_SECONDS gives every scheduled job one period in seconds; unset keeps each job its own', () => {
    assert.equal(loadAppConfig({}).scheduledJobPeriodMs, null);
    assert.equal(loadAppConfig({ SCHEDULED_JOB_PERIOD_SECONDS: ' ' }).scheduledJobPeriodMs, null);
    assert.equal(loadAppConfig({ SCHEDULED_JOB_PERIOD_SECONDS: '1' }).scheduledJobPeriodMs, 1_000);
    assert.equal(loadAppConfig({ SCHEDULED_JOB_PERIOD_SECONDS: '86400' }).scheduledJobPeriodMs, 86_400_000);
    assertRefused('SCHEDULED_JOB_PERIOD_SECONDS', ['0', '-1', '0.5', 'soon', '86401']);
  });
});
