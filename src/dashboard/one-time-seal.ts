import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const INFO = 'dashboard one-time values';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals the values a dashboard page shows once (a minted key, a rotated
 * secret) while they wait in the session row for that page. The key is
 * derived from the session's cookie value, which only the browser holds (the
 * row keeps its hash): the database alone can never open them. AES-256-GCM,
 * with the page's path as associated data, so a value opens only for the
 * page it was kept for.
 */
export class OneTimeSeal {
  private readonly key: Buffer;

  constructor(cookieValue: string) {
    this.key = Buffer.from(hkdfSync('sha256', cookieValue, Buffer.alloc(0), INFO, 32));
  }

  seal(path: string, value: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(path));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The value, or null when it was sealed with another cookie or for another page, or was altered. */
  open(path: string, sealed: string): string | null {
    const [version, iv, body] = sealed.split('.');
    if (version !== VERSION || iv === undefined || body === undefined) return null;
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url')).setAAD(
        Buffer.from(path),
      );
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      return null;
    }
  }
}
