import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Database } from '../../src/database/sql/sql-target';
import { UnitOfWork } from '../../src/database/unit-of-work';
import { WebhookDeliveryAttemptEntity } from '../../src/webhooks/entities/webhook-delivery-attempt.entity';
import { WebhookDeliveryEntity } from '../../src/webhooks/entities/webhook-delivery.entity';
import { WebhookSubscriptionEntity } from '../../src/webhooks/entities/webhook-subscription.entity';
import { WebhookWarningEntity } from '../../src/webhooks/entities/webhook-warning.entity';
import { freshDatabase } from './test-database';

/** A fresh migrated database with Webhooks' entities, for the specs beside its repositories. */
export interface WebhookTables {
  url: string;
  dataSource: DataSource;
  database: Database;
  unitOfWork: UnitOfWork;
}

export async function webhookTables(): Promise<WebhookTables> {
  const url = await freshDatabase();
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    entities: [WebhookSubscriptionEntity, WebhookDeliveryEntity, WebhookDeliveryAttemptEntity, WebhookWarningEntity],
  });
  await dataSource.initialize();
  return { url, dataSource, database: new Database(dataSource), unitOfWork: new UnitOfWork(dataSource) };
}

export interface SubscriptionFixture {
  id?: string;
  principalType?: 'organiser' | 'venue';
  principalId?: string;
  events?: string[];
  enabled?: boolean;
  consecutiveFailures?: number;
  deleted?: boolean;
  /** How long ago it was deleted (implies deleted). */
  deletedDaysAgo?: number;
}

/** One subscription written directly; returns its id. */
export async function insertSubscription(db: DataSource, fixture: SubscriptionFixture = {}): Promise<string> {
  const id = fixture.id ?? `whk_${randomUUID().slice(0, 12)}`;
  const deletedDaysAgo = fixture.deletedDaysAgo ?? (fixture.deleted === true ? 0 : null);
  await db.query(
    `INSERT INTO webhook_subscription
            (id, principal_type, principal_id, url, events, secret_sealed, enabled, consecutive_failures, deleted_at)
     VALUES ($1, $2, $3, 'https://receiver.example/hook', $4, 'sealed', $5, $6,
             CASE WHEN $7::int IS NULL THEN NULL ELSE now() - $7::int * interval '1 day' END)`,
    [
      id,
      fixture.principalType ?? 'organiser',
      fixture.principalId ?? 'org_a',
      fixture.events ?? ['order.confirmed', 'event.published'],
      fixture.enabled ?? true,
      fixture.consecutiveFailures ?? 0,
      deletedDaysAgo,
    ],
  );
  return id;
}

export interface DeliveryFixture {
  subscriptionId: string;
  id?: string;
  status?: 'pending' | 'succeeded' | 'failed' | 'dropped' | 'skipped';
  /** Seconds from now the delivery is (or was) due; negative is in the past. Pending only. */
  dueInSeconds?: number;
  /** A live lease held by this token (listed in its subscription's turn, as a claim lists it). */
  leasedBy?: string;
  replay?: boolean;
  /** When it was created, days ago (with a fraction for hours). */
  createdDaysAgo?: number;
  /** When a final delivery completed, days ago. */
  completedDaysAgo?: number;
}

/**
 * One delivery written directly, in queue order of the calls; returns its id.
 * A pending one goes into the queue, a final one into its completion day's
 * history partition (made here if missing).
 */
export async function insertDelivery(db: DataSource, fixture: DeliveryFixture): Promise<string> {
  const id = fixture.id ?? randomUUID();
  const status = fixture.status ?? 'pending';
  if (status === 'pending') {
    await db.query(
      `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, status, next_attempt_at,
                                     lease_expires_at, lease_token, replay, created_at)
       VALUES ($1, $2, 'order.confirmed', $1, '\\x7b7d', 'pending', now() + $3::int * interval '1 second',
               CASE WHEN $4::text IS NOT NULL THEN now() + interval '1 minute' END, $4, $5,
               now() - $6::float8 * interval '1 day')`,
      [
        id,
        fixture.subscriptionId,
        fixture.dueInSeconds ?? -1,
        fixture.leasedBy ?? null,
        fixture.replay ?? false,
        fixture.createdDaysAgo ?? 0,
      ],
    );
    if (fixture.leasedBy !== undefined) {
      // As the claim that made it would: a lease is on its subscription's list of what is in flight.
      await db.query(
        `WITH latest AS (
           SELECT n, in_flight FROM webhook_delivery_flight WHERE subscription_id = $2 ORDER BY n DESC LIMIT 1
         ), replaced AS (
           DELETE FROM webhook_delivery_flight f USING latest WHERE f.subscription_id = $2 AND f.n = latest.n
         )
         INSERT INTO webhook_delivery_flight (subscription_id, in_flight)
         SELECT $2, coalesce((SELECT in_flight FROM latest), '{}') || $1::text`,
        [id, fixture.subscriptionId],
      );
    }
    return id;
  }
  await ensureHistoryDay(db, fixture.completedDaysAgo ?? 0);
  await db.query(
    `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, created_at,
                                           completed_at)
     VALUES ($1, $2, 'order.confirmed', $1, '\\x7b7d', $3::text, now() - $4::float8 * interval '1 day',
             now() - $5::float8 * interval '1 day')`,
    [id, fixture.subscriptionId, status, fixture.createdDaysAgo ?? 0, fixture.completedDaysAgo ?? 0],
  );
  return id;
}

/** Makes the history's and attempt log's partition of the UTC day `daysAgo` days before now (fractions allowed). */
export async function ensureHistoryDay(
  db: { query(text: string, values: unknown[]): Promise<unknown> },
  daysAgo: number,
): Promise<void> {
  await db.query(
    `SELECT webhook_history_ensure_partitions(d, d)
       FROM (SELECT ((now() - $1::float8 * interval '1 day') AT TIME ZONE 'UTC')::date AS d) AS day`,
    [daysAgo],
  );
}

/** A delivery's row as stored (in the queue or the history), for assertions. */
export async function deliveryRow(
  db: DataSource,
  id: string,
): Promise<{ status: string; attempts: number; lease_token: string | null; last_status: string | null } | undefined> {
  const rows: Array<{ status: string; attempts: number; lease_token: string | null; last_status: string | null }> =
    await db.query(
      `SELECT status, attempts, lease_token, last_status FROM webhook_delivery WHERE id = $1
       UNION ALL
       SELECT status, attempts, NULL, last_status FROM webhook_delivery_history WHERE id = $1`,
      [id],
    );
  return rows[0];
}

/**
 * `count` failed deliveries of one subscription in today's history, in one
 * statement, with ids `<prefix>0001` (oldest) to `<prefix><count>` (newest):
 * a long delivery log for the paging tests. Each is about an order of its
 * own, as real deliveries are (one per subscription and fact), so that
 * recovering them queues them all again.
 */
export async function insertFailedHistoryDeliveries(
  db: { query(text: string, values?: unknown[]): Promise<unknown> },
  subscriptionId: string,
  prefix: string,
  count: number,
): Promise<void> {
  await ensureHistoryDay(db, 0);
  await db.query(
    `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, created_at,
                                           completed_at)
     SELECT $2 || lpad(n::text, 4, '0'), $1, 'order.confirmed', $2 || 'order' || n, '\\x7b7d', 'failed', now(), now()
       FROM generate_series(1, $3::int) AS n ORDER BY n`,
    [subscriptionId, prefix, count],
  );
}
