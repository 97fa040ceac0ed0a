import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  generateWebhookSecret,
  signPayload,
  verifySignature,
} from './webhook-signature';

const SECRET = 'whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const BODY = '{"id":"evt_1","type":"order.confirmed"}';
const T = 1_700_000_000;

void describe('signPayload', () => {
  void it('keys HMAC-SHA256 with the whole whsec_ string over "<t>.<raw_body>" and writes t=,v1=', () => {
    // Vector computed outside Node: printf '1700000000.<body>' | openssl dgst -sha256 -hmac '<secret>'
    assert.equal(
      signPayload(SECRET, BODY, T),
      't=1700000000,v1=222430c864173257ff458c4cde0c29c4984533ea296a7112c4e1ef3ea87bd4d0',
    );
  });

  void it('signs the raw body bytes, including bytes that are not valid UTF-8', () => {
    // printf '1700000000.\xff\x00\xfe' | openssl dgst -sha256 -hmac 'whsec_test'
    assert.equal(
      signPayload('whsec_test', Buffer.from([0xff, 0x00, 0xfe]), T),
      't=1700000000,v1=dec157072f3d8fab90f6e7c19cf63b5d9fd51ceb318f09093baab207c001ace5',
    );
  });

  void it('signs a string body as its UTF-8 bytes, the same as the equivalent Buffer', () => {
    const body = '{"billingName":"Zoë Ōtsuka 🎟"}';
    assert.equal(signPayload(SECRET, body, T), signPayload(SECRET, Buffer.from(body, 'utf8'), T));
  });

  void it('refuses a timestamp that is not whole non-negative seconds', () => {
    assert.throws(() => signPayload(SECRET, BODY, 1_700_000_000.5), RangeError);
    assert.throws(() => signPayload(SECRET, BODY, -1), RangeError);
    assert.throws(() => signPayload(SECRET, BODY, Number.NaN), RangeError);
  });

  void it('refuses an empty secret rather than signing with an empty key', () => {
    assert.throws(() => signPayload('', BODY, T), /secret/);
  });
});

void describe('verifySignature', () => {
  void it('accepts any body it signed with the same secret and timestamp', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.uint8Array(),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        (secret, bytes, t) => {
          const rawBody = Buffer.from(bytes);
          const header = signPayload(secret, rawBody, t);
          assert.deepEqual(verifySignature({ secret, rawBody, header, nowSeconds: t }), { ok: true });
        },
      ),
    );
  });

  void it('reports a missing header as missing_header', () => {
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header: undefined, nowSeconds: T }), {
      ok: false,
      reason: 'missing_header',
    });
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header: '  ', nowSeconds: T }), {
      ok: false,
      reason: 'missing_header',
    });
  });

  void it('reports a header without t, without v1, with a non-numeric t, a repeated t or non-hex v1 as malformed_header', () => {
    const v1 = signPayload(SECRET, BODY, T).split(',')[1];
    const malformed = [
      v1,
      `t=${T}`,
      `t=${T},v0=abcd`,
      `t=abc,${v1}`,
      `t=-${T},${v1}`,
      `t=${T}.5,${v1}`,
      `t=${T},t=${T},${v1}`,
      `t=${T},v1=xyz`,
      `t=${T},v1=abc`,
      `t=${T},v1=`,
      `t=${T},${v1},garbage`,
      'not a signature',
    ];
    for (const header of malformed) {
      assert.deepEqual(
        verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T }),
        { ok: false, reason: 'malformed_header' },
        header,
      );
    }
  });

  void it('rejects a correctly signed timestamp older than the tolerance', () => {
    const header = signPayload(SECRET, BODY, T);
    assert.deepEqual(
      verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 301, toleranceSeconds: 300 }),
      { ok: false, reason: 'timestamp_out_of_tolerance' },
    );
  });

  void it('rejects a correctly signed timestamp further in the future than the tolerance', () => {
    const header = signPayload(SECRET, BODY, T);
    assert.deepEqual(
      verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T - 301, toleranceSeconds: 300 }),
      { ok: false, reason: 'timestamp_out_of_tolerance' },
    );
  });

  void it('accepts a timestamp exactly at the tolerance in either direction', () => {
    const header = signPayload(SECRET, BODY, T);
    for (const nowSeconds of [T - 300, T + 300]) {
      assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds, toleranceSeconds: 300 }), {
        ok: true,
      });
    }
  });

  void it('defaults the tolerance to 300 seconds', () => {
    assert.equal(DEFAULT_SIGNATURE_TOLERANCE_SECONDS, 300);
    const header = signPayload(SECRET, BODY, T);
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 300 }), { ok: true });
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 301 }), {
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
  });

  void it('honours a caller-chosen tolerance', () => {
    const header = signPayload(SECRET, BODY, T);
    assert.deepEqual(
      verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 11, toleranceSeconds: 10 }),
      { ok: false, reason: 'timestamp_out_of_tolerance' },
    );
    assert.deepEqual(
      verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T + 3600, toleranceSeconds: 7200 }),
      { ok: true },
    );
  });

  void it('uses the current clock when nowSeconds is not given', () => {
    const now = Math.floor(Date.now() / 1000);
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header: signPayload(SECRET, BODY, now) }), {
      ok: true,
    });
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header: signPayload(SECRET, BODY, T) }), {
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
  });

  void it('reports signature_mismatch for a different secret', () => {
    const header = signPayload(generateWebhookSecret(), BODY, T);
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T }), {
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  void it('reports signature_mismatch when any single byte of the body changed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (bytes, at, flip) => {
        const original = Buffer.from(bytes);
        const header = signPayload(SECRET, original, T);
        const tampered = Buffer.from(original);
        const index = at % tampered.length;
        tampered.writeUInt8(tampered.readUInt8(index) ^ flip, index);
        assert.deepEqual(verifySignature({ secret: SECRET, rawBody: tampered, header, nowSeconds: T }), {
          ok: false,
          reason: 'signature_mismatch',
        });
      }),
    );
  });

  void it('does not verify a re-serialised copy of the JSON body', () => {
    const raw = '{ "id": "evt_1", "type": "order.confirmed" }';
    const header = signPayload(SECRET, raw, T);
    const reserialised = JSON.stringify(JSON.parse(raw));
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: reserialised, header, nowSeconds: T }), {
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  void it('reports signature_mismatch when the timestamp was changed after signing', () => {
    const v1 = signPayload(SECRET, BODY, T).split(',')[1];
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header: `t=${T + 1},${v1}`, nowSeconds: T }), {
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  void it('accepts a header where any one of several v1 entries matches', () => {
    const good = signPayload(SECRET, BODY, T).split(',')[1];
    const stale = signPayload(generateWebhookSecret(), BODY, T).split(',')[1];
    assert.deepEqual(
      verifySignature({ secret: SECRET, rawBody: BODY, header: `t=${T},${stale},${good}`, nowSeconds: T }),
      { ok: true },
    );
    assert.deepEqual(
      verifySignature({ secret: SECRET, rawBody: BODY, header: `t=${T}, ${good} , ${stale}`, nowSeconds: T }),
      { ok: true },
    );
  });

  void it('treats a truncated or extended v1 as a mismatch instead of throwing on the length difference', () => {
    const [, v1] = signPayload(SECRET, BODY, T).split('v1=');
    assert.ok(v1 !== undefined, 'a signature header carries v1=');
    for (const candidate of [v1.slice(0, 32), `${v1}00`, '00']) {
      assert.deepEqual(
        verifySignature({ secret: SECRET, rawBody: BODY, header: `t=${T},v1=${candidate}`, nowSeconds: T }),
        { ok: false, reason: 'signature_mismatch' },
      );
    }
  });

  void it('skips signature schemes other than v1 so a v1 entry can still match', () => {
    const header = signPayload(SECRET, BODY, T).replace(',v1=', ',v0=deadbeef,v2=cafe,v1=');
    assert.deepEqual(verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T }), { ok: true });
  });

  void it('refuses a negative tolerance as a caller error', () => {
    const header = signPayload(SECRET, BODY, T);
    assert.throws(
      () => verifySignature({ secret: SECRET, rawBody: BODY, header, nowSeconds: T, toleranceSeconds: -1 }),
      RangeError,
    );
  });
});

void describe('generateWebhookSecret', () => {
  void it('returns whsec_ followed by 64 lowercase hex characters', () => {
    assert.match(generateWebhookSecret(), /^whsec_[0-9a-f]{64}$/);
  });

  void it('returns a different secret on every call', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => generateWebhookSecret()));
    assert.equal(secrets.size, 50);
  });
});
