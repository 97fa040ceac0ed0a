import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  acceptsFormBodies,
  audienceOfRoute,
  prefixBeforeVersion,
  routeServes,
  stripPrefixBeforeVersion,
} from './listener';

describe('stripPrefixBeforeVersion', () => {
  it('routes a path prefix in front of the v1 segment as the path from v1 on', () => {
    assert.equal(stripPrefixBeforeVersion('/api/v1/me'), '/v1/me');
    assert.equal(stripPrefixBeforeVersion('/x/y/v1/me?a=1'), '/v1/me?a=1');
    assert.equal(stripPrefixBeforeVersion('/api/v1'), '/v1');
  });

  it('leaves paths without a prefix, or without a v1 segment, alone', () => {
    assert.equal(stripPrefixBeforeVersion('/v1/me'), '/v1/me');
    assert.equal(stripPrefixBeforeVersion('/docs'), '/docs');
    assert.equal(stripPrefixBeforeVersion('/api/v10/me'), '/api/v10/me');
  });
});

describe('prefixBeforeVersion', () => {
  it('is what stripPrefixBeforeVersion takes away: the prefix in front of v1, or nothing', () => {
    assert.equal(prefixBeforeVersion('/api/v1/events'), '/api');
    assert.equal(prefixBeforeVersion('/x/y/v1/me?a=1'), '/x/y');
    assert.equal(prefixBeforeVersion('/v1/events'), '');
    assert.equal(prefixBeforeVersion('/api/v10/me'), '');
  });

  it('gives no prefix that is not plain path segments, so a Location never names another host', () => {
    assert.equal(prefixBeforeVersion('//evil.example/v1/events'), '');
    assert.equal(prefixBeforeVersion('http://evil.example/v1/events'), '');
    assert.equal(prefixBeforeVersion('/a//b/v1/events'), '');
    assert.equal(prefixBeforeVersion('/a\\b/v1/events'), '');
    assert.equal(prefixBeforeVersion('/api/v2beta/v1/events'), '/api/v2beta');
  });
});

describe('audienceOfRoute', () => {
  it('puts /internal routes on the admin listener only, behind the admin token', () => {
    assert.deepEqual(audienceOfRoute('/internal/keys/:keyId'), { listeners: ['admin'], credential: 'admin-token' });
    assert.deepEqual(audienceOfRoute('/internal'), { listeners: ['admin'], credential: 'admin-token' });
    assert.equal(routeServes('/internal/keys', 'public'), false);
  });

  it('serves the probes on both listeners without a credential', () => {
    for (const probe of ['/healthz', '/readyz']) {
      assert.deepEqual(audienceOfRoute(probe), { listeners: ['public', 'admin'], credential: 'none' });
    }
  });

  it('serves the API reference on the public listener without a credential', () => {
    for (const reference of ['/openapi.json', '/openapi.yaml', '/docs', '/docs/*']) {
      assert.deepEqual(audienceOfRoute(reference), { listeners: ['public'], credential: 'none' });
    }
  });

  it('serves the portal under /portal on the public listener only, with a portal session and no other credential', () => {
    for (const pattern of ['/portal', '/portal/subscriptions/:webhookId', '/portal/anything/not/planned']) {
      assert.deepEqual(audienceOfRoute(pattern), { listeners: ['public'], credential: 'portal-session' });
      assert.equal(routeServes(pattern, 'admin'), false);
    }
    for (const pattern of ['/portals', '/v1/portal', '/internal/portal-links']) {
      assert.notEqual(audienceOfRoute(pattern).credential, 'portal-session');
    }
  });

  it('parses urlencoded form bodies on dashboard and portal routes only', () => {
    assert.equal(acceptsFormBodies('/portal/subscriptions/:webhookId/recover'), true);
    assert.equal(acceptsFormBodies('/internal/dashboard/organisers'), true);
    assert.equal(acceptsFormBodies('/v1/webhooks'), false);
    assert.equal(acceptsFormBodies('/portalx'), false);
  });

  it('requires an API key on every other route, including ones nobody planned for (fail closed)', () => {
    for (const pattern of ['/v1/me', '/internals', '/healthz/extra', '/openapi.json.bak', '/anything', '/portals']) {
      assert.deepEqual(audienceOfRoute(pattern), { listeners: ['public'], credential: 'api-key' });
    }
  });
});
