import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, DEFAULT_EMBEDDED_PG_HOME, embeddedPgHome } from './app-config';

describe('EMBEDDED_PG_HOME', () => {
  it('defaults to /var/lib/events-api when unset or empty', () => {
    assert.equal(embeddedPgHome({}), DEFAULT_EMBEDDED_PG_HOME);
    assert.equal(embeddedPgHome({ EMBEDDED_PG_HOME: ' ' }), '/var/lib/events-api');
  });

  it('refuses a relative path: the service changes modes inside that folder and must know where it is', () => {
    assert.throws(() => embeddedPgHome({ EMBEDDED_PG_HOME: 'var/lib/x' }), ConfigError);
    assert.equal(embeddedPgHome({ EMBEDDED_PG_HOME: '/srv/events-api' }), '/srv/events-api');
  });
});
