import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { sealingKeyId } from '../../../libs/webhooks/sealing-key-id';
import { APP_CONFIG, ConfigError, type AppConfig } from '../../config/app-config';

const SEALED_PREFIX = 'aes256gcm.';
/** Values sealed before keys had ids: any configured key may have sealed them. */
const LEGACY_KEY_ID = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface SealingKey {
  id: string;
  key: Buffer;
}

/**
 * A key's id is a digest of the key, never the key: a sealed value names the
 * key that opens it, so the key can be rotated (old values open under a key
 * listed in WEBHOOK_SECRET_KEY_PREVIOUS until they are re-sealed).
 */
function sealingKey(hex: string): SealingKey {
  return { id: sealingKeyId(hex), key: Buffer.from(hex, 'hex') };
}

/**
 * Webhook secrets must come back in plaintext (create and list), so they
 * cannot be hashed; they are sealed at rest with AES-256-GCM under
 * WEBHOOK_SECRET_KEY, a fresh IV per secret, and the subscription id as
 * associated data so a sealed value copied onto another row does not open.
 * A sealed value is `aes256gcm.<key id>.<base64url iv|tag|ciphertext>`.
 * With no key configured (WEBHOOK_SECRETS_PLAINTEXT=1) secrets are stored as
 * they are, and a warning says so once at start.
 */
@Injectable()
export class WebhookSecretCipher implements OnModuleInit {
  private readonly current: SealingKey | null;
  private readonly readable: SealingKey[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.current = config.webhooks.secretKey === null ? null : sealingKey(config.webhooks.secretKey);
    const previous = config.webhooks.previousSecretKeys.map(sealingKey);
    this.readable = this.current === null ? previous : [this.current, ...previous];
  }

  onModuleInit(): void {
    if (this.current !== null) return;
    new Logger(WebhookSecretCipher.name).warn(
      'WEBHOOK_SECRET_KEY is not set: webhook secrets are stored unencrypted. Set 64 hex characters to encrypt them at rest.',
    );
  }

  seal(subscriptionId: string, secret: string): string {
    if (this.current === null) return secret;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED_PREFIX}${this.current.id}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
  }

  open(subscriptionId: string, sealed: string): string {
    // Rows written while no key was configured keep working after one is set.
    if (!sealed.startsWith(SEALED_PREFIX)) return sealed;
    const rest = sealed.slice(SEALED_PREFIX.length);
    const dot = rest.indexOf('.');
    const keyId = rest.slice(0, dot);
    const packed = Buffer.from(rest.slice(dot + 1), 'base64url');
    const candidates = keyId === LEGACY_KEY_ID ? this.readable : this.readable.filter((key) => key.id === keyId);
    if (candidates.length === 0) {
      // The settings' to fix, not the request's: a command says it as a refused setting (exit code 2).
      throw new ConfigError(
        `a webhook secret is sealed under key ${keyId}, which is neither WEBHOOK_SECRET_KEY nor listed in WEBHOOK_SECRET_KEY_PREVIOUS`,
      );
    }
    let failure: unknown = null;
    for (const candidate of candidates) {
      try {
        return this.openWith(candidate.key, subscriptionId, packed);
      } catch (error) {
        failure = error;
      }
    }
    throw failure instanceof Error ? failure : new Error('a webhook secret could not be opened');
  }

  /** Whether a value sealed under this key id can be opened with the keys configured. */
  canOpenKeyId(keyId: string): boolean {
    return keyId === LEGACY_KEY_ID || this.readable.some((key) => key.id === keyId);
  }

  /** False for a value sealed under another key, or not sealed at all, while a key is configured. */
  isSealedUnderCurrentKey(sealed: string): boolean {
    if (this.current === null) return true;
    return sealed.startsWith(`${SEALED_PREFIX}${this.current.id}.`);
  }

  private openWith(key: Buffer, subscriptionId: string, packed: Buffer): string {
    const iv = packed.subarray(0, IV_BYTES);
    const tag = packed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(packed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
