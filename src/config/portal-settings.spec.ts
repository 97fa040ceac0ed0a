import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from './app-config';

describe('portal settings', () => {
  it('points portal links at the public listener on localhost by default', () => {
    assert.equal(loadAppConfig({}).portal.url, 'http://localhost:3000/portal');
    assert.equal(loadAppConfig({ PORT: '8080' }).portal.url, 'http://localhost:8080/portal');
  });

  it('takes PORTAL_URL as given, without a trailing slash, and refuses anything but an http(s) URL', () => {
    assert.equal(
      loadAppConfig({ PORTAL_URL: 'https://hooks.example.com/portal/' }).portal.url,
      'https://hooks.example.com/portal',
    );
    assert.throws(() => loadAppConfig({ PORTAL_URL: 'ftp://example.com/portal' }), /PORTAL_URL/);
    assert.throws(() => loadAppConfig({ PORTAL_URL: 'not a url' }), ConfigError);
  });

  it('refuses a PORTAL_URL with a fragment or credentials, which would break or leak every link, and keeps one with a query', () => {
    for (const bad of [
      'https://hooks.example.com/portal#top',
      'https://hooks.example.com/portal#',
      'https://user:pw@hooks.example.com/portal',
    ]) {
      assert.throws(
        () => loadAppConfig({ PORTAL_URL: bad }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message.startsWith('PORTAL_URL must be an http(s) URL without credentials or a fragment'),
        bad,
      );
    }
    assert.equal(
      loadAppConfig({ PORTAL_URL: 'https://hooks.example.com/portal?tenant=acme' }).portal.url,
      'https://hooks.example.com/portal?tenant=acme',
    );
  });

  it('writes a frame ancestor as its origin whatever its case, default port or trailing slash', () => {
    assert.deepEqual(
      loadAppConfig({
        PORTAL_FRAME_ANCESTORS: 'HTTPS://APP.EXAMPLE.COM https://admin.example.com:443/ http://localhost:80',
      }).portal.frameAncestors,
      ['https://app.example.com', 'https://admin.example.com', 'http://localhost'],
    );
  });

  it('allows no framing by default', () => {
    assert.deepEqual(loadAppConfig({}).portal.frameAncestors, []);
  });

  it('reads PORTAL_FRAME_ANCESTORS as space-separated origins', () => {
    assert.deepEqual(
      loadAppConfig({ PORTAL_FRAME_ANCESTORS: ' https://app.example.com   http://localhost:8080 ' }).portal
        .frameAncestors,
      ['https://app.example.com', 'http://localhost:8080'],
    );
  });

  it('refuses a frame ancestor whose host would break out of the CSP directive (a semicolon, comma or quote)', () => {
    for (const bad of ['https://app.example.com;sandbox', 'https://a,b.example.com', 'https://a"b.example.com']) {
      assert.throws(() => loadAppConfig({ PORTAL_FRAME_ANCESTORS: bad }), /PORTAL_FRAME_ANCESTORS/, bad);
    }
    assert.deepEqual(
      loadAppConfig({ PORTAL_FRAME_ANCESTORS: 'https://[::1]:8443 http://127.0.0.1:8080' }).portal.frameAncestors,
      ['https://[::1]:8443', 'http://127.0.0.1:8080'],
    );
  });

  it('refuses a frame ancestor that is not a plain origin (path, wildcard, keyword, other scheme)', () => {
    for (const bad of [
      'https://app.example.com/embed',
      'https://*.example.com',
      "'self'",
      '*',
      'data:',
      'app.example.com',
      'https://app.example.com/?',
      'https://app.example.com/#',
      'https://user@app.example.com',
    ]) {
      assert.throws(() => loadAppConfig({ PORTAL_FRAME_ANCESTORS: bad }), /PORTAL_FRAME_ANCESTORS/, bad);
    }
  });
});
