import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsPattern } from './search-pattern';

describe('containsPattern', () => {
  it('escapes LIKE wildcards so a search matches them literally', () => {
    assert.equal(containsPattern('50%_off\\'), '%50\\%\\_off\\\\%');
    assert.equal(containsPattern('Acme'), '%Acme%');
  });
});
