import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { WebhookSubscriptionRepository } from '../webhook-subscription.repository';
import { WebhookSecretCipher } from './webhook-secret.cipher';

/**
 * Refuses to start a service whose keys cannot open the stored webhook
 * secrets (a WEBHOOK_SECRET_KEY changed without its predecessor in
 * WEBHOOK_SECRET_KEY_PREVIOUS, or the embedded default's key file replaced):
 * otherwise it would come up ready, answer `GET /v1/webhooks` with 500s and
 * record no delivery attempt while the backlog grows. The one-shot CLI is
 * not checked, so `webhooks:reseal-secrets` can still be run to mend it.
 */
@Injectable()
export class SealingKeyCheck implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly cipher: WebhookSecretCipher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.runBackgroundWork) return;
    const unreadable = (await this.subscriptions.sealingKeyIds()).filter(
      ({ keyId }) => !this.cipher.canOpenKeyId(keyId),
    );
    if (unreadable.length === 0) return;
    const named = unreadable.map(({ keyId, secrets }) => `${secrets} under key ${keyId}`).join(', ');
    throw new Error(
      `stored webhook secrets cannot be opened with the configured keys (${named}): start with the key they were sealed with as WEBHOOK_SECRET_KEY, or list it in WEBHOOK_SECRET_KEY_PREVIOUS (then npm run ops -- webhooks:reseal-secrets seals them under the new key)`,
    );
  }
}
