import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { stripeSdk } from '../../test/support/stripe-sdk';
import { signPayloadWithAll, standardWebhooksSignature, verifySignature } from './webhook-signature';

/** The test vector of docs/webhooks.md. */
const VECTOR = {
  secret: 'whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  previous: 'whsec_fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210',
  id: '9f2c8a4e-1b7d-4c3e-8f6a-2d5b7c9e1a03',
  timestamp: 1767225600,
  body: '{"id":"9f2c8a4e-1b7d-4c3e-8f6a-2d5b7c9e1a03","type":"order.confirmed"}',
  serviceSignature: 't=1767225600,v1=51ef61e9796d5de9462966f2dc7ab2a9cecf8ddcda0052a17b2debfce9ab840e',
  standardSignature: 'v1,mPkTdPKR79GaOcoxAjQatHgzc7QJ4rVrRhWhJCmzdlE=',
  rotatingServiceSignature:
    't=1767225600,v1=51ef61e9796d5de9462966f2dc7ab2a9cecf8ddcda0052a17b2debfce9ab840e,' +
    'v1=644b32c082aeee2e780e256be10ad76ea04015e4e99907460f604c607c8b0e29',
  rotatingStandardSignature:
    'v1,mPkTdPKR79GaOcoxAjQatHgzc7QJ4rVrRhWhJCmzdlE= v1,XzTT7fgkeTzUgGMXfhK5Zl29hXvvtW7DA5/w9dTyHlE=',
};

void describe('signatures: the README test vector', () => {
  void it('produces the documented Service-Signature and webhook-signature values', () => {
    assert.equal(signPayloadWithAll([VECTOR.secret], VECTOR.body, VECTOR.timestamp), VECTOR.serviceSignature);
    assert.equal(
      standardWebhooksSignature([VECTOR.secret], VECTOR.id, VECTOR.timestamp, VECTOR.body),
      VECTOR.standardSignature,
    );
  });

  void it('signs with every active secret, newest first, during a rotation', () => {
    assert.equal(
      signPayloadWithAll([VECTOR.secret, VECTOR.previous], VECTOR.body, VECTOR.timestamp),
      VECTOR.rotatingServiceSignature,
    );
    assert.equal(
      standardWebhooksSignature([VECTOR.secret, VECTOR.previous], VECTOR.id, VECTOR.timestamp, VECTOR.body),
      VECTOR.rotatingStandardSignature,
    );
  });

  void it('is what the standardwebhooks library computes from the whsec_ secret as the API returns it', () => {
    const library = new Webhook(VECTOR.secret);
    assert.equal(library.sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body), VECTOR.standardSignature);
  });

  void it('verifies with the standardwebhooks library holding either secret of a rotation', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(now),
      'webhook-signature': standardWebhooksSignature([VECTOR.secret, VECTOR.previous], VECTOR.id, now, VECTOR.body),
    };
    for (const secret of [VECTOR.secret, VECTOR.previous]) {
      assert.deepEqual(new Webhook(secret).verify(VECTOR.body, headers), JSON.parse(VECTOR.body));
    }
    assert.throws(() => new Webhook(`whsec_${'ab'.repeat(32)}`).verify(VECTOR.body, headers));
  });

  void it("verifies with Stripe's constructEvent (the Service-Signature scheme is Stripe's) holding either secret", () => {
    const stripe = stripeSdk();
    const now = Math.floor(Date.now() / 1000);
    const header = signPayloadWithAll([VECTOR.secret, VECTOR.previous], VECTOR.body, now);
    for (const secret of [VECTOR.secret, VECTOR.previous]) {
      assert.deepEqual(
        stripe.webhooks.constructEvent(Buffer.from(VECTOR.body), header, secret),
        JSON.parse(VECTOR.body),
      );
      assert.deepEqual(verifySignature({ secret, rawBody: VECTOR.body, header, nowSeconds: now }), { ok: true });
    }
    assert.throws(() => stripe.webhooks.constructEvent(Buffer.from(VECTOR.body), header, `whsec_${'ab'.repeat(32)}`));
  });
});
