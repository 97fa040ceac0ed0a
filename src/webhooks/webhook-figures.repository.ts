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

/** The table the claim reads and writes: the pending and leased deliveries. */
const QUEUE_TABLE = sqlText(`'webhook_delivery'`);

/** Up to this many pending deliveries are counted; past it the count is estimated (see FIGURES_STATEMENT). */
export const PENDING_COUNTED_UP_TO = 10_000;

/**
 * All three figures in one statement, so a scrape costs one round trip and
 * nothing on the write paths has to keep a count in step. What it reads is
 * bounded whatever the backlog, so a scrape answers within its deadline at a
 * million pending, when the figures matter most.
 *
 * The lag is read per subscription with something queued (its turn), from
 * the head of its queue (walked from the turn's position, as claims walk
 * it): the oldest of its first few due deliveries in queue
 * order (more than a few due out of queue order would take more than the
 * attempts a subscription may have in flight). It leaves out what the
 * worker may not send, or an endpoint that is merely down would look like a
 * worker falling behind: deliveries of disabled or deleted subscriptions,
 * and, for a failing subscription, everything behind its oldest pending
 * delivery (only that one is probed, on the backoff schedule).
 *
 * Pending is counted up to PENDING_COUNTED_UP_TO; past it, it is estimated
 * from the queue's size on disk and its rows per page when last analysed
 * (never less than what was counted). Exported for the test that what it
 * reads does not grow with the backlog.
 */
export const FIGURES_STATEMENT = defineStatement<
  NoParams,
  { lag_seconds: number | null; pending: number | null; disabled: number | null }
>(
  () => sql`WITH heads AS (
      SELECT head.next_attempt_at
        FROM webhook_delivery_turn t JOIN webhook_subscription s ON s.id = t.subscription_id
       CROSS JOIN LATERAL (
             SELECT min(x.next_attempt_at) AS next_attempt_at
               FROM (SELECT d.next_attempt_at FROM webhook_delivery d
                      WHERE d.subscription_id = t.subscription_id AND d.status = 'pending' AND d.seq >= t.from_seq
                      ORDER BY d.seq
                      LIMIT CASE WHEN s.consecutive_failures = 0 THEN 8 ELSE 1 END) x
              WHERE x.next_attempt_at <= now()) head
       WHERE s.enabled AND s.deleted_at IS NULL
    ), counted AS (
      SELECT count(*)::int AS n FROM (SELECT 1 FROM webhook_delivery WHERE status = 'pending'
                                      LIMIT ${sqlText(String(PENDING_COUNTED_UP_TO + 1))}) x
    ), estimated AS (
      SELECT (c.reltuples / nullif(c.relpages, 0)
              * (pg_relation_size(c.oid) / current_setting('block_size')::int))::float8 AS n
        FROM pg_class c WHERE c.oid = ${QUEUE_TABLE}::regclass AND c.reltuples > 0
    )
    SELECT (SELECT extract(epoch FROM now() - min(heads.next_attempt_at))::float8 FROM heads) AS lag_seconds,
           CASE WHEN counted.n <= ${sqlText(String(PENDING_COUNTED_UP_TO))} THEN counted.n
                ELSE greatest(counted.n, coalesce((SELECT round(estimated.n)::int FROM estimated), 0)) END AS pending,
           (SELECT count(*)::int FROM webhook_subscription WHERE NOT enabled AND deleted_at IS NULL) AS disabled
      FROM counted`,
  { prepared: false },
);

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
    const row = await FIGURES_STATEMENT.one(NO_PARAMS, this.database);
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
