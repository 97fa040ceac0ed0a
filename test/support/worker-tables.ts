import { randomUUID } from 'node:crypto';
import { after, before, beforeEach } from 'node:test';
import { AttemptRecordRepository, type AttemptRecord } from '../../src/webhooks/delivery/attempt-record.repository';
import type { ClaimedDelivery } from '../../src/webhooks/delivery/claimed-delivery';
import { DeliveryClaimRepository } from '../../src/webhooks/delivery/delivery-claim.repository';
import { webhookTables, type WebhookTables } from './webhook-rows';

/** Webhook tables with the delivery worker's two steps on them: its claim and its attempt records. */
export interface WorkerTables extends WebhookTables {
  claims: DeliveryClaimRepository;
  attemptRecords: AttemptRecordRepository;
}

/**
 * The set-up of the specs beside the claim and the attempt records, which
 * set their scenes with each other (a delivery is recorded once it is
 * claimed; a turn is left with nothing queued once what it claimed is
 * recorded): fresh webhook tables, made before the suite's tests, emptied
 * before each and closed after the last. Call it inside a describe; read the
 * members inside tests, once `before` has run (as with withApp).
 */
export function withWorkerTables(): WorkerTables {
  const tables = {} as WorkerTables;
  before(async () => {
    Object.assign(tables, await webhookTables());
    tables.claims = new DeliveryClaimRepository(tables.database, tables.unitOfWork);
    tables.attemptRecords = new AttemptRecordRepository(tables.database);
  });
  after(async () => tables.dataSource.destroy());
  beforeEach(async () => {
    await tables.dataSource.query(
      'TRUNCATE webhook_subscription, webhook_delivery, webhook_delivery_history, webhook_delivery_attempt CASCADE',
    );
  });
  return tables;
}

/** The limits the specs claim with: the worker's caps, and a lease that outlasts any test. */
export const CLAIM_LIMITS = { maxDeliveries: 64, perSubscription: 4, leaseMs: 60_000 };

/** Leases what is due to `leaseToken`, with CLAIM_LIMITS where `limits` says nothing else. */
export function claimDue(
  claims: DeliveryClaimRepository,
  leaseToken: string = randomUUID(),
  limits: Partial<typeof CLAIM_LIMITS> = {},
): Promise<ClaimedDelivery[]> {
  return claims.claim({ ...CLAIM_LIMITS, ...limits, leaseToken });
}

/** An attempt's record of a claimed delivery: a failure, to be retried at once, unless `overrides` say otherwise. */
export function attemptRecord(delivery: ClaimedDelivery, overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    delivery,
    attemptedAt: new Date(),
    outcome: 500,
    durationMs: 12,
    httpStatus: 500,
    responseExcerpt: 'unavailable',
    succeeded: false,
    trigger: 'scheduled',
    next: { status: 'pending', retryInMs: 0 },
    ...overrides,
  };
}
