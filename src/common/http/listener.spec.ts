import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listenerForPath, stripPrefixBeforeVersion } from './listener';

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

describe('listenerForPath', () => {
  it('puts /internal paths on the admin listener and everything else on the public one', () => {
    assert.equal(listenerForPath('/internal/keys'), 'admin');
    assert.equal(listenerForPath('/internal'), 'admin');
    assert.equal(listenerForPath('/internals'), 'public');
    assert.equal(listenerForPath('/v1/me'), 'public');
  });
});
