import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayPrefixOf, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format';

describe('API key format', () => {
  it('generates svc_live_ plus 48 lowercase hex with a valid checksum', () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey()));
    assert.equal(keys.size, 50);
    for (const key of keys) {
      assert.match(key, /^svc_live_[0-9a-f]{48}$/);
      assert.ok(isWellFormedApiKey(key));
    }
  });

  it('refuses a key whose checksum does not match, without a database read', () => {
    const key = generateApiKey();
    const flipped = `${key.slice(0, 20)}${key[20] === 'a' ? 'b' : 'a'}${key.slice(21)}`;
    assert.equal(isWellFormedApiKey(flipped), false);
  });

  it('refuses wrong prefixes, lengths, cases and characters', () => {
    const key = generateApiKey();
    for (const bad of [key.slice(1), `${key}0`, key.toUpperCase(), key.replace('svc_live_', 'svc_test_'), ` ${key}`]) {
      assert.equal(isWellFormedApiKey(bad), false, bad);
    }
  });

  it('hashes with SHA-256 and shows only a short display prefix', () => {
    const key = generateApiKey();
    assert.match(hashApiKey(key), /^[0-9a-f]{64}$/);
    assert.ok(!hashApiKey(key).includes(key.slice(9)));
    assert.equal(displayPrefixOf(key), `${key.slice(0, 15)}…`);
  });
});
