import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from '../config/app-config';

describe('SHUTDOWN_TIMEOUT_MS', () => {
  it('in-flight requests get 10 seconds by default', () => {
    assert.equal(loadAppConfig({}).shutdownTimeoutMs, 10_000);
  });

  it('SHUTDOWN_TIMEOUT_MS sets the bound, and a value that is not a whole number stops the start naming it', () => {
    assert.equal(loadAppConfig({ SHUTDOWN_TIMEOUT_MS: '2500' }).shutdownTimeoutMs, 2500);
    assert.throws(
      () => loadAppConfig({ SHUTDOWN_TIMEOUT_MS: 'soon' }),
      (error: unknown) => error instanceof ConfigError && error.message.includes('SHUTDOWN_TIMEOUT_MS'),
    );
  });
});
