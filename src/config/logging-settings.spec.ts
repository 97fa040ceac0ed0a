import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';

void describe('LOG_LEVEL', () => {
  void it('takes pino’s levels, in any case, and info when unset', () => {
    assert.equal(loadAppConfig({}).logLevel, 'info');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      assert.equal(loadAppConfig({ LOG_LEVEL: level }).logLevel, level);
    }
    assert.equal(loadAppConfig({ LOG_LEVEL: ' Debug ' }).logLevel, 'debug');
  });

  void it('refuses at start a level pino does not have (verbose, warning), naming the setting and the levels', () => {
    for (const bad of ['verbose', 'warning', 'log', '30']) {
      assert.throws(
        () => loadAppConfig({ LOG_LEVEL: bad }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message === `LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, got "${bad}"`,
        bad,
      );
    }
  });
});
