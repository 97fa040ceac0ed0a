import type { WebhookResponseDto } from './dto/webhook.dto';
import type { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import type { WebhookSecretCipher } from './secrets/webhook-secret.cipher';
import { outcomeFromText } from './webhook-event-types';

/** The Webhook as the public list shows it (api-v1.md), with the current secret opened. */
export function presentWebhook(row: WebhookSubscriptionEntity, cipher: WebhookSecretCipher): WebhookResponseDto {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    secret: cipher.open(row.id, row.secretSealed),
    enabled: row.enabled,
    description: row.description,
    lastStatus: outcomeFromText(row.lastStatus),
    consecutiveFailures: row.consecutiveFailures,
  };
}
