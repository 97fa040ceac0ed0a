import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_LISTENER_METADATA } from '@nestjs/event-emitter';
import { COMMITTED } from '../../common/domain-events/domain-event-bus';
import { WEBHOOK_EVENT_TYPES } from '../webhook-event-types';
import { WebhookOutboxListener } from './webhook-outbox.listener';

interface Listening {
  event: string;
  suppressErrors: boolean | undefined;
}

/** What each method of the outbox listens for, as @OnEvent recorded it. */
function listening(): Listening[] {
  const prototype = WebhookOutboxListener.prototype as unknown as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype).flatMap((name) => {
    const method = prototype[name];
    if (typeof method !== 'function') return [];
    const recorded = (Reflect.getMetadata(EVENT_LISTENER_METADATA, method) ?? []) as Array<{
      event: string;
      options?: { suppressErrors?: boolean };
    }>;
    return recorded.map(({ event, options }) => ({ event, suppressErrors: options?.suppressErrors }));
  });
}

describe('the outbox listens for every event type a subscription may name', () => {
  it('turns each into deliveries inside the publishing transaction, failing it on error, and wakes the worker after commit', () => {
    const heard = listening();
    for (const type of WEBHOOK_EVENT_TYPES) {
      // A type without its handler would be accepted by POST /v1/webhooks and never delivered.
      assert.ok(
        heard.some((listener) => listener.event === type && listener.suppressErrors === false),
        `${type}: no handler in the publishing transaction that fails it on error`,
      );
      assert.ok(
        heard.some((listener) => listener.event === `${type}${COMMITTED}`),
        `${type}: the worker is not woken after commit`,
      );
    }
  });
});
