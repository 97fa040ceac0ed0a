import { LRUCache } from 'lru-cache';
import type { WebhookSecretCipher } from '../secrets/webhook-secret.cipher';
import type { ClaimedDelivery } from './claimed-delivery';

/** Subscriptions whose opened secrets are kept; the least recently sent to are opened again when next needed. */
const KEPT_SUBSCRIPTIONS = 4_096;

/**
 * The secrets an attempt is signed with, opened once per sealed value rather
 * than per attempt: a busy subscription is sent to thousands of times a
 * second, and opening (AES-GCM) cost more than signing. Keyed by the sealed
 * value as stored, so a rotation or a re-seal is a new key and is opened
 * afresh; the subscription id is part of the key because it is part of what
 * opens the value (its associated data).
 */
export class SigningSecrets {
  private readonly opened = new LRUCache<string, string>({ max: KEPT_SUBSCRIPTIONS });

  constructor(private readonly cipher: WebhookSecretCipher) {}

  /** The active secrets, newest first. */
  of(delivery: ClaimedDelivery): string[] {
    const secrets = [this.open(delivery.subscriptionId, delivery.secretSealed)];
    if (delivery.previousSecretSealed !== null) {
      secrets.push(this.open(delivery.subscriptionId, delivery.previousSecretSealed));
    }
    return secrets;
  }

  private open(subscriptionId: string, sealed: string): string {
    const key = `${subscriptionId} ${sealed}`;
    let secret = this.opened.get(key);
    if (secret === undefined) {
      secret = this.cipher.open(subscriptionId, sealed);
      this.opened.set(key, secret);
    }
    return secret;
  }
}
