import type { WebhookResponseDto } from './webhook.dto';

/** A subscription's badge on the pages that show it (the dashboard's and the portal's). */
export type WebhookHealth = 'healthy' | 'failing' | 'disabled';

/** Disabled outranks failing; any failure since the last success is failing. */
export function healthOf(webhook: Pick<WebhookResponseDto, 'enabled' | 'consecutiveFailures'>): WebhookHealth {
  if (!webhook.enabled) return 'disabled';
  return webhook.consecutiveFailures > 0 ? 'failing' : 'healthy';
}
