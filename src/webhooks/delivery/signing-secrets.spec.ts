import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { AppConfig } from '../../config/app-config';
import { WebhookSecretCipher } from '../secrets/webhook-secret.cipher';
import type { ClaimedDelivery } from './claimed-delivery';
import { SigningSecrets } from './signing-secrets';

/** The real cipher, counting how often it opens a value. */
class CountingCipher extends WebhookSecretCipher {
  opens = 0;
  override open(subscriptionId: string, sealed: string): string {
    this.opens += 1;
    return super.open(subscriptionId, sealed);
  }
}

describe('SigningSecrets', () => {
  const cipher = new CountingCipher({
    webhooks: { secretKey: randomBytes(32).toString('hex'), previousSecretKeys: [] },
  } as unknown as AppConfig);
  const delivery = (subscriptionId: string, secretSealed: string, previousSecretSealed: string | null = null) =>
    ({ subscriptionId, secretSealed, previousSecretSealed }) as ClaimedDelivery;

  it('opens a subscription’s sealed secret once for all its attempts, and a rotated or re-sealed value afresh', () => {
    const secrets = new SigningSecrets(cipher);
    const first = cipher.seal('whk_a', 'whsec_first');
    for (let i = 0; i < 5; i += 1) assert.deepEqual(secrets.of(delivery('whk_a', first)), ['whsec_first']);
    assert.equal(cipher.opens, 1);

    // A rotation: the new secret signs first, the previous one still signs during its grace period.
    const second = cipher.seal('whk_a', 'whsec_second');
    assert.deepEqual(secrets.of(delivery('whk_a', second, first)), ['whsec_second', 'whsec_first']);
    assert.equal(cipher.opens, 2, 'only the new value is opened');

    // The same secret re-sealed (another IV) is a new value: opened, and still the same secret.
    assert.deepEqual(secrets.of(delivery('whk_a', cipher.seal('whk_a', 'whsec_second'))), ['whsec_second']);
    assert.equal(cipher.opens, 3);
  });

  it('never opens a value copied onto another subscription from what it opened for the first', () => {
    const secrets = new SigningSecrets(cipher);
    const sealed = cipher.seal('whk_a', 'whsec_a');
    assert.deepEqual(secrets.of(delivery('whk_a', sealed)), ['whsec_a']);
    assert.throws(() => secrets.of(delivery('whk_b', sealed)));
  });
});
