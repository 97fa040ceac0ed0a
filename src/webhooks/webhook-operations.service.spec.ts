import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionUnavailableError } from '../../test/support/connection-unavailable-error';
import type { AppConfig } from '../config/app-config';
import { isConnectionUnavailable } from '../database/connection-unavailable';
import type { UnitOfWork } from '../database/unit-of-work';
import type { DeliveryHistoryRepository } from './delivery-history.repository';
import type { WebhookDeliveryWorker } from './delivery/webhook-delivery.worker';
import type { WebhookSecretCipher } from './secrets/webhook-secret.cipher';
import { WebhookOperationsService } from './webhook-operations.service';
import type { WebhookSubscriptionRepository } from './webhook-subscription.repository';

/** A service whose repositories answer as given: each test names the step that finds no connection. */
function operations(parts: {
  subscriptions: Partial<WebhookSubscriptionRepository>;
  deliveryRows: Partial<DeliveryHistoryRepository>;
  sent?: unknown[];
}): WebhookOperationsService {
  const unitOfWork = { run: (work: (tx: unknown) => Promise<unknown>) => work({}) } as unknown as UnitOfWork;
  const worker = {
    wake: () => undefined,
    sendNow: (leased: unknown) => parts.sent?.push(leased),
  } as unknown as WebhookDeliveryWorker;
  const config = { webhooks: { timeoutMs: 1_000 } } as unknown as AppConfig;
  return new WebhookOperationsService(
    parts.subscriptions as WebhookSubscriptionRepository,
    parts.deliveryRows as DeliveryHistoryRepository,
    {} as WebhookSecretCipher,
    unitOfWork,
    worker,
    config,
  );
}

describe('WebhookOperationsService after a commit', () => {
  it('fails an enable whose recovery finds no connection after the enable committed as a 500, never a 503 to retry', async () => {
    const unavailable = await connectionUnavailableError();
    let enabled = 0;
    const service = operations({
      subscriptions: {
        enable: () => {
          enabled += 1;
          return Promise.resolve({ disabledSince: new Date(0), skippedAfterSeq: '7' });
        },
      },
      deliveryRows: { requeueWindow: () => Promise.reject(unavailable) },
    });
    await assert.rejects(service.enable('whk_1', { recover: true }), (error: unknown) => {
      assert.equal(error instanceof Error && error.cause, unavailable);
      return !isConnectionUnavailable(error);
    });
    assert.equal(enabled, 1);
  });

  it('makes a leased resend’s attempt, and fails as a 500, when the read after the lease finds no connection', async () => {
    const unavailable = await connectionUnavailableError();
    const leased = { id: 'delivery-1' };
    const sent: unknown[] = [];
    const service = operations({
      subscriptions: { findLive: () => Promise.resolve({ enabled: true } as never) },
      deliveryRows: {
        leaseForResend: () => Promise.resolve(leased as never),
        listForSubscription: () => Promise.reject(unavailable),
      },
      sent,
    });
    await assert.rejects(service.resend('whk_1', 'delivery-1'), (error: unknown) => !isConnectionUnavailable(error));
    assert.deepEqual(sent, [leased], 'the attempt the lease was taken for is made');
  });
});
