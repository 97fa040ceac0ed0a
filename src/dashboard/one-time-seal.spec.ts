import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OneTimeSeal } from './one-time-seal';

describe('values shown once, sealed with the cookie value', () => {
  it('opens a sealed value only with the same cookie value and for the same page', () => {
    const sealed = new OneTimeSeal('cookie-a').seal('/keys/key_1', 'evk_live_secret');
    assert.doesNotMatch(sealed, /evk_live_secret/);
    assert.equal(new OneTimeSeal('cookie-a').open('/keys/key_1', sealed), 'evk_live_secret');
    assert.equal(new OneTimeSeal('cookie-b').open('/keys/key_1', sealed), null, 'another cookie cannot open it');
    assert.equal(new OneTimeSeal('cookie-a').open('/keys/key_2', sealed), null, 'nor another page');
  });

  it('refuses a sealed value that was altered or is not one', () => {
    const seal = new OneTimeSeal('cookie-a');
    const sealed = seal.seal('/p', 'value');
    const altered = `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`;
    assert.equal(seal.open('/p', altered), null);
    for (const junk of ['', 'v1', 'v1..', 'v2.x.y', 'v1.!!.??']) assert.equal(seal.open('/p', junk), null, junk);
  });
});
