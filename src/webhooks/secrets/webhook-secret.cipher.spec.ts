import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { generateWebhookSecret } from '../../../libs/webhooks';
import { loadAppConfig } from '../../config/app-config';
import { WebhookSecretCipher } from './webhook-secret.cipher';

function cipherWith(secretKey: string | undefined): WebhookSecretCipher {
  const env: Record<string, string> = { LOG_LEVEL: 'silent' };
  if (secretKey !== undefined) env['WEBHOOK_SECRET_KEY'] = secretKey;
  return new WebhookSecretCipher(loadAppConfig(env));
}

void describe('WebhookSecretCipher', () => {
  const key = randomBytes(32).toString('hex');

  void it('seals a secret so that the stored text does not contain it, and opens it again', () => {
    const cipher = cipherWith(key);
    const secret = generateWebhookSecret();
    const sealed = cipher.seal('whk_1', secret);
    assert.ok(!sealed.includes(secret.slice(6)));
    assert.ok(!sealed.includes('whsec_'));
    assert.equal(cipher.open('whk_1', sealed), secret);
  });

  void it('uses a fresh IV per secret, so sealing the same secret twice differs', () => {
    const cipher = cipherWith(key);
    const secret = generateWebhookSecret();
    assert.notEqual(cipher.seal('whk_1', secret), cipher.seal('whk_1', secret));
  });

  void it('refuses to open a sealed secret under another subscription id or another key', () => {
    const sealed = cipherWith(key).seal('whk_1', generateWebhookSecret());
    assert.throws(() => cipherWith(key).open('whk_2', sealed));
    assert.throws(() => cipherWith(randomBytes(32).toString('hex')).open('whk_1', sealed));
  });

  void it('refuses a tampered ciphertext', () => {
    const cipher = cipherWith(key);
    const sealed = cipher.seal('whk_1', generateWebhookSecret());
    const last = sealed.at(-2) === 'A' ? 'B' : 'A';
    assert.throws(() => cipher.open('whk_1', `${sealed.slice(0, -2)}${last}${sealed.slice(-1)}`));
  });

  void it('stores and returns the plaintext when no key is configured, and opens such rows once a key is set', () => {
    const secret = generateWebhookSecret();
    const stored = cipherWith(undefined).seal('whk_1', secret);
    assert.equal(stored, secret);
    assert.equal(cipherWith(key).open('whk_1', stored), secret);
  });
});

void describe('WebhookSecretCipher key ids', () => {
  const oldKey = randomBytes(32).toString('hex');
  const newKey = randomBytes(32).toString('hex');
  const rotated = (): WebhookSecretCipher =>
    new WebhookSecretCipher(
      loadAppConfig({ WEBHOOK_SECRET_KEY: newKey, WEBHOOK_SECRET_KEY_PREVIOUS: oldKey, LOG_LEVEL: 'silent' }),
    );

  void it('names the key that sealed a value, never the key itself', () => {
    const sealed = cipherWith(oldKey).seal('whk_1', generateWebhookSecret());
    assert.match(sealed, /^aes256gcm\.k[0-9a-f]{12}\./);
    assert.ok(!sealed.includes(oldKey));
    assert.equal(cipherWith(oldKey).isSealedUnderCurrentKey(sealed), true);
    assert.equal(cipherWith(newKey).isSealedUnderCurrentKey(sealed), false);
  });

  void it('opens values sealed under a previous key listed in WEBHOOK_SECRET_KEY_PREVIOUS, and seals under the new one', () => {
    const secret = generateWebhookSecret();
    const sealedOld = cipherWith(oldKey).seal('whk_1', secret);
    const cipher = rotated();
    assert.equal(cipher.open('whk_1', sealedOld), secret);
    const resealed = cipher.seal('whk_1', cipher.open('whk_1', sealedOld));
    assert.equal(cipher.isSealedUnderCurrentKey(resealed), true);
    assert.equal(cipherWith(newKey).open('whk_1', resealed), secret);
    assert.throws(() => cipherWith(newKey).open('whk_1', sealedOld), /neither WEBHOOK_SECRET_KEY nor listed/);
  });

  void it('still opens values sealed before keys had ids (aes256gcm.v1.)', () => {
    const secret = generateWebhookSecret();
    const sealed = cipherWith(oldKey).seal('whk_1', secret);
    const legacy = sealed.replace(/^aes256gcm\.k[0-9a-f]{12}\./, 'aes256gcm.v1.');
    assert.equal(rotated().open('whk_1', legacy), secret);
  });
});
