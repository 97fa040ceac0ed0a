import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API keys: `svc_live_` + 48 lowercase hex characters. The first 40 are
 * random (160 bits from the CSPRNG); the last 8 are the CRC32 of those 40, as
 * GitHub does for its tokens, so a mistyped or truncated key is refused
 * without a database read and a leaked key is easy to recognise by pattern.
 * Only the SHA-256 of the whole key is ever stored.
 */
export const API_KEY_PREFIX = 'svc_live_';
const API_KEY_PATTERN = /^svc_live_([0-9a-f]{40})([0-9a-f]{8})$/;
/** Hex characters of the random part shown in `keyPrefix`: enough to tell keys apart, far too few to guess the rest. */
const DISPLAY_HEX_CHARS = 6;

function checksum(random: string): string {
  return crc32(Buffer.from(random, 'ascii')).toString(16).padStart(8, '0');
}

export function generateApiKey(): string {
  const random = randomBytes(20).toString('hex');
  return `${API_KEY_PREFIX}${random}${checksum(random)}`;
}

/** True when the text has the key format and its checksum holds; says nothing about whether the key exists. */
export function isWellFormedApiKey(text: string): boolean {
  const match = API_KEY_PATTERN.exec(text);
  return match !== null && match[1] !== undefined && checksum(match[1]) === match[2];
}

export function hashApiKey(key: string): string {
  // One-shot: no Hash object per request (every authenticated request hashes its key for the cache).
  return hash('sha256', key, 'hex');
}

/** The non-secret display fragment, e.g. `svc_live_3f9a1c…`. */
export function displayPrefixOf(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + DISPLAY_HEX_CHARS)}…`;
}
