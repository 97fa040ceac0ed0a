import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';

void describe('PUBLIC_WEB_URL', () => {
  void it('is the base of the links the service writes, without a trailing slash', () => {
    assert.equal(loadAppConfig({}).publicWebUrl, 'http://localhost:3000');
    assert.equal(
      loadAppConfig({ PUBLIC_WEB_URL: 'https://events.example.com/app/' }).publicWebUrl,
      'https://events.example.com/app',
    );
  });

  void it('refuses credentials, a query or a fragment, after which the paths it is given would not be paths', () => {
    for (const bad of [
      'https://events.example.com/?ref=api',
      'https://events.example.com/?',
      'https://events.example.com/#top',
      'https://user:pw@events.example.com',
    ]) {
      assert.throws(
        () => loadAppConfig({ PUBLIC_WEB_URL: bad }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message ===
            `PUBLIC_WEB_URL must be an http(s) URL without credentials, a query or a fragment, got "${bad}"`,
        bad,
      );
    }
  });
});
