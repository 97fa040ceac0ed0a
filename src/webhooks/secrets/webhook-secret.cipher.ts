import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';

const SEALED_PREFIX = 'aes256gcm.v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Webhook secrets must come back in plaintext (create and list), so they
 * cannot be hashed; they are sealed at rest with AES-256-GCM under
 * WEBHOOK_SECRET_KEY, a fresh IV per secret, and the subscription id as
 * associated data so a sealed value copied onto another row does not open.
 * With no key configured (a DATABASE_URL without WEBHOOK_SECRET_KEY) secrets
 * are stored as they are, and a warning says so once at start.
 */
@Injectable()
export class WebhookSecretCipher implements OnModuleInit {
  private readonly key: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = config.webhooks.secretKey === null ? null : Buffer.from(config.webhooks.secretKey, 'hex');
  }

  onModuleInit(): void {
    if (this.key !== null) return;
    new Logger(WebhookSecretCipher.name).warn(
      'WEBHOOK_SECRET_KEY is not set: webhook secrets are stored unencrypted. Set 64 hex characters to encrypt them at rest.',
    );
  }

  seal(subscriptionId: string, secret: string): string {
    if (this.key === null) return secret;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
  }

  open(subscriptionId: string, sealed: string): string {
    // Rows written while no key was configured keep working after one is set.
    if (!sealed.startsWith(SEALED_PREFIX)) return sealed;
    if (this.key === null) {
      throw new Error('a webhook secret is encrypted but WEBHOOK_SECRET_KEY is not set');
    }
    const packed = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
    const iv = packed.subarray(0, IV_BYTES);
    const tag = packed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(packed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
