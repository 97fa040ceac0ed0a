import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Receivers are told to accept five minutes of clock skew, the tolerance
 * Stripe, Svix and Ticket Tailor all document; a tighter default would reject
 * honest receivers whose clocks drift.
 */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export type SignatureFailureReason =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch';

export type SignatureVerification = { ok: true } | { ok: false; reason: SignatureFailureReason };

export interface VerifySignatureOptions {
  secret: string;
  rawBody: Buffer | string;
  header: string | undefined;
  toleranceSeconds?: number;
  nowSeconds?: number;
}

function hmac(secret: string, rawBody: Buffer | string, timestampSeconds: number): Buffer {
  if (secret.length === 0) throw new Error('webhook secret must not be empty');
  // The key is the whole `whsec_...` string, not its hex part decoded, because
  // that is the string receivers copy from the API and feed to their own HMAC.
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestampSeconds}.`, 'utf8')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest();
}

/**
 * The `Service-Signature` header value for one attempt. Sign the stored body
 * bytes exactly as they are sent: re-serialised JSON would not verify.
 */
export function signPayload(secret: string, rawBody: Buffer | string, timestampSeconds: number): string {
  // A fractional or negative `t` would be written into the header and then be
  // refused by every receiver, so it is a caller bug worth failing loudly on.
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError('timestampSeconds must be a non-negative whole number of unix seconds');
  }
  return `t=${timestampSeconds},v1=${hmac(secret, rawBody, timestampSeconds).toString('hex')}`;
}

interface ParsedSignatureHeader {
  timestampSeconds: number;
  signatures: Buffer[];
}

const TIMESTAMP = /^\d{1,15}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

function parseHeader(header: string): ParsedSignatureHeader | null {
  let timestampSeconds: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const item = part.trim();
    const eq = item.indexOf('=');
    if (eq <= 0) return null;
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key === 't') {
      // Two timestamps would let a forwarder choose which one the receiver reads.
      if (timestampSeconds !== null || !TIMESTAMP.test(value)) return null;
      timestampSeconds = Number(value);
    } else if (key === 'v1') {
      if (!HEX.test(value)) return null;
      signatures.push(Buffer.from(value, 'hex'));
    }
    // Other schemes (v0, a future v2) are skipped so that adding one during a
    // rotation does not break receivers that only know v1.
  }
  if (timestampSeconds === null || signatures.length === 0) return null;
  return { timestampSeconds, signatures };
}

/**
 * What a receiver does with `Service-Signature`; the service uses it in tests
 * and documents it for integrators. Several `v1` entries are accepted so that
 * a secret can be rolled with both old and new signatures in flight.
 */
export function verifySignature(options: VerifySignatureOptions): SignatureVerification {
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0)
    throw new RangeError('toleranceSeconds must be a non-negative number');
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);

  if (options.header === undefined || options.header.trim() === '') return { ok: false, reason: 'missing_header' };
  const parsed = parseHeader(options.header);
  if (parsed === null) return { ok: false, reason: 'malformed_header' };

  // Checked in both directions: a `t` from the future is as suspect as an old
  // one, since a captured request could otherwise be replayed until it "arrives".
  if (Math.abs(now - parsed.timestampSeconds) > tolerance) return { ok: false, reason: 'timestamp_out_of_tolerance' };

  const expected = hmac(options.secret, options.rawBody, parsed.timestampSeconds);
  // timingSafeEqual throws on a length difference, and the length of a
  // candidate reveals nothing about the secret, so comparing it first is safe.
  const matched = parsed.signatures.some(
    (candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected),
  );
  return matched ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}

/** `whsec_` and 64 lowercase hex characters: 256 bits from the CSPRNG. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('hex')}`;
}

/**
 * `Service-Signature` for several active secrets (a rotation's grace period):
 * one `t` and one `v1=` per secret, newest first, as Stripe sends during a
 * roll. A receiver holding any one of the secrets verifies.
 */
export function signPayloadWithAll(
  secrets: readonly string[],
  rawBody: Buffer | string,
  timestampSeconds: number,
): string {
  const [first, ...rest] = secrets;
  if (first === undefined) throw new Error('at least one webhook secret is needed to sign');
  const head = signPayload(first, rawBody, timestampSeconds);
  return rest.reduce(
    (header, secret) => `${header},v1=${hmac(secret, rawBody, timestampSeconds).toString('hex')}`,
    head,
  );
}

/**
 * The HMAC key Standard Webhooks derives from a `whsec_` secret: the text
 * after the prefix, base64-decoded (standardwebhooks `new Webhook(secret)`).
 * Our secrets are 64 hex characters, which are valid base64 (48 bytes), so a
 * receiver passes the secret exactly as the API returned it.
 */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret must not be empty');
  return key;
}

/**
 * The `webhook-signature` header of the Standard Webhooks specification:
 * `v1,<base64 HMAC-SHA256>` over `<webhook-id>.<webhook-timestamp>.<raw body>`,
 * one per secret, separated by spaces, newest first.
 */
export function standardWebhooksSignature(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  rawBody: Buffer | string,
): string {
  return secrets
    .map((secret) =>
      createHmac('sha256', standardWebhooksKey(secret))
        .update(`${messageId}.${timestampSeconds}.`, 'utf8')
        .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
        .digest('base64'),
    )
    .map((signature) => `v1,${signature}`)
    .join(' ');
}
