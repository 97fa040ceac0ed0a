import { Injectable } from '@nestjs/common';
import { sql, sqlText } from '../database/sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';

/** The outbox's state as monitoring reads it. */
export interface WebhookFigures {
  /** Seconds the oldest delivery the worker could send now has been due (0 when none is due). */
  lagSeconds: number;
  /** Deliveries waiting to be sent, due now or scheduled for a retry. */
  pending: number;
  /** Live subscriptions that are disabled. */
  disabledSubscriptions: number;
}

/**
 * All three figures in one statement, so a scrape costs one round trip and
 * nothing on the write paths has to keep a count in step.
 *
 * The lag leaves out what the worker may not send, or an endpoint that is
 * merely down would look like a worker falling behind: deliveries of
 * disabled or deleted subscriptions, and, for a failing subscription,
 * everything behind its oldest pending delivery (only that one is probed,
 * on the backoff schedule).
 */
const FIGURES = defineStatement<
  NoParams,
  { lag_seconds: number | null; pending: number | null; disabled: number | null }
>(
  () => sql`SELECT
             (SELECT extract(epoch FROM now() - min(d.next_attempt_at))::float8
                FROM webhook_delivery d JOIN webhook_subscription s ON s.id = d.subscription_id
               WHERE d.status = 'pending' AND d.next_attempt_at <= now()
                 AND s.enabled AND s.deleted_at IS NULL
                 AND (s.consecutive_failures = 0 OR NOT EXISTS (
                       SELECT 1 FROM webhook_delivery o
                        WHERE o.subscription_id = d.subscription_id AND o.status = 'pending' AND o.seq < d.seq))
             ) AS lag_seconds,
             (SELECT count(*)::int FROM webhook_delivery WHERE status = 'pending') AS pending,
             (SELECT count(*)::int FROM webhook_subscription WHERE NOT enabled AND deleted_at IS NULL) AS disabled`,
  { prepared: false },
);

/** The table the claim reads and writes: the pending and leased deliveries. */
const QUEUE_TABLE = sqlText(`'webhook_delivery'`);

/**
 * Dead row versions in the queue table that vacuum has not removed yet. Each
 * claim and attempt leaves some; a transaction that holds the xmin horizon
 * keeps vacuum from removing them, and the claim then reads through them.
 */
const QUEUE_DEAD_ROWS = defineStatement<NoParams, { dead_rows: number | null }>(
  () => sql`SELECT coalesce(sum(n_dead_tup), 0)::float8 AS dead_rows FROM pg_stat_user_tables
        WHERE relid = ${QUEUE_TABLE}::regclass`,
  { prepared: false },
);

@Injectable()
export class WebhookFiguresRepository {
  constructor(private readonly database: Database) {}

  async read(): Promise<WebhookFigures> {
    const row = await FIGURES.one(NO_PARAMS, this.database);
    return {
      lagSeconds: Math.max(0, row?.lag_seconds ?? 0),
      pending: row?.pending ?? 0,
      disabledSubscriptions: row?.disabled ?? 0,
    };
  }

  async queueDeadRows(): Promise<number> {
    const row = await QUEUE_DEAD_ROWS.one(NO_PARAMS, this.database);
    return row?.dead_rows ?? 0;
  }
}
