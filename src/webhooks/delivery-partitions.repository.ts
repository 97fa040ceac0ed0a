import { Injectable } from '@nestjs/common';
import { sql } from '../database/sql/sql-fragment';
import { sqlIdentifier } from '../database/sql/sql-identifier';
import { defineStatement } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';

/** The history's and the attempt log's day partitions (migration DeliveryQueueAndHistory). */
const PARENT = /^webhook_delivery_(history|attempt)$/;
const DAY_PARTITION = /^webhook_delivery_(history|attempt)_d[0-9]{8}$/;

/** Makes the missing day partitions of the UTC days [today + fromDay, today + toDay]. */
const ENSURE_PARTITIONS = defineStatement<{ fromDay: number; toDay: number }, { made: number }>(
  (p) => sql`SELECT webhook_history_ensure_partitions((now() AT TIME ZONE 'UTC')::date + ${p.fromDay}::int,
                                                   (now() AT TIME ZONE 'UTC')::date + ${p.toDay}::int) AS made`,
  { prepared: false },
);

/**
 * The day partitions whose whole day ended more than `retentionDays` ago:
 * attached ones (`parent` set; `detaching` when an earlier detach was cut
 * short), and ones already detached whose drop was cut short (`parent`
 * null). Oldest first.
 */
const EXPIRED_PARTITIONS = defineStatement<
  { retentionDays: number },
  { name: string; parent: string | null; detaching: boolean; estimated_rows: number }
>(
  (p) => sql`SELECT c.relname::text AS name, parent.relname::text AS parent,
                coalesce(i.inhdetachpending, false) AS detaching,
                greatest(c.reltuples, 0)::float8 AS estimated_rows
           FROM pg_class c
           LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
           LEFT JOIN pg_class parent ON parent.oid = i.inhparent
          WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
            AND c.relname ~ '^webhook_delivery_(history|attempt)_d[0-9]{8}$'
            AND (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC'
                <= now() - ${p.retentionDays}::int * interval '1 day'
          ORDER BY right(c.relname, 8), c.relname`,
  { prepared: false },
);

/** Final deliveries in the history's expired days (read before they go: the count retention reports). */
const EXPIRED_DELIVERIES = defineStatement<{ retentionDays: number }, { n: number }>(
  (p) => sql`SELECT count(*)::int AS n FROM webhook_delivery_history
          WHERE completed_at < ((now() - ${p.retentionDays}::int * interval '1 day') AT TIME ZONE 'UTC')::date::timestamp
                               AT TIME ZONE 'UTC'`,
  { prepared: false },
);

/** Detaching never blocks the deliveries' reads and writes (no DEFAULT partition exists, so it is allowed). */
function detachConcurrently(parent: string, name: string) {
  return defineStatement(
    () =>
      sql`ALTER TABLE ${sqlIdentifier(parent, PARENT)} DETACH PARTITION ${sqlIdentifier(name, DAY_PARTITION)} CONCURRENTLY`,
    // Waits for every older transaction to end: a held snapshot may rightly hold it longer than a statement's bound.
    { prepared: false, unbounded: true },
  );
}

/** Ends a detach that was cut short (the partition is left "detach pending"). */
function finalizeDetach(parent: string, name: string) {
  return defineStatement(
    () =>
      sql`ALTER TABLE ${sqlIdentifier(parent, PARENT)} DETACH PARTITION ${sqlIdentifier(name, DAY_PARTITION)} FINALIZE`,
    { prepared: false, unbounded: true },
  );
}

function dropTable(name: string) {
  return defineStatement(() => sql`DROP TABLE IF EXISTS ${sqlIdentifier(name, DAY_PARTITION)}`, { prepared: false });
}

const HISTORY_DAY_PARTITION = /^webhook_delivery_history_d[0-9]{8}$/;

/**
 * The skipped deliveries of subscriptions still disabled (and not deleted), skipped since they were disabled
 * (numbered above disabled_seq; all of them when that number is unknown), in a history day partition about to
 * be dropped, moved into today's (completed now; id, number and creation time kept): they are what an enable
 * with recovery sends, and a subscription may stay off longer than the retention. The subscriptions are locked
 * FOR KEY SHARE, as a publication locks them: an enable (FOR UPDATE) that commits first is seen (its
 * subscription is left out, and its recovery already took what it wanted), and one that comes later waits for
 * this move and then finds the moved deliveries. An attached partition is written directly: the rows move in
 * one statement, so a reader of the history sees each once.
 */
function keepSkippedWhileDisabled(name: string) {
  return defineStatement(
    () =>
      sql`WITH kept AS (
        DELETE FROM ${sqlIdentifier(name, HISTORY_DAY_PARTITION)} h
         USING (SELECT s.id, s.disabled_seq FROM webhook_subscription s WHERE NOT s.enabled AND s.deleted_at IS NULL
                   FOR KEY SHARE) off
         WHERE h.subscription_id = off.id AND h.status = 'skipped'
           AND (off.disabled_seq IS NULL OR h.seq > off.disabled_seq)
        RETURNING h.*
      )
      INSERT INTO webhook_delivery_history
             (id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status, created_at,
              trace_id, retry_from)
      SELECT id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status, created_at,
             trace_id, retry_from
        FROM kept`,
    { prepared: false },
  );
}

export interface DroppedPartitions {
  partitions: number;
  deliveries: number;
  /** From the statistics (approximate): counting millions of rows would cost what dropping them saves. */
  attempts: number;
  /** Skipped deliveries of subscriptions still disabled, moved out of the expired days instead (kept). */
  keptSkipped: number;
}

/**
 * The day partitions of the delivery history and of the attempt log: made
 * ahead of the days they hold, detached (concurrently) and dropped whole
 * once the day is past retention, so retention never deletes a row and
 * leaves no dead rows behind. The DDL is written per partition (DDL takes no
 * parameters); each name comes from the catalogue and is checked against
 * the day partitions' shape.
 */
@Injectable()
export class DeliveryPartitionsRepository {
  constructor(private readonly database: Database) {}

  /** Makes the partitions of the days from `fromDay` to `toDay` (relative to today, UTC) where missing. */
  async ensureDays(fromDay: number, toDay: number): Promise<number> {
    return (await ENSURE_PARTITIONS.one({ fromDay, toDay }, this.database))?.made ?? 0;
  }

  /** Detaches and drops every day partition of both tables whose day ended more than `retentionDays` ago. */
  async dropExpired(retentionDays: number): Promise<DroppedPartitions> {
    const dropped: DroppedPartitions = { partitions: 0, deliveries: 0, attempts: 0, keptSkipped: 0 };
    const expired = await EXPIRED_PARTITIONS.rows({ retentionDays }, this.database);
    if (expired.length === 0) return dropped;
    // Before anything is detached or counted: what is kept is not dropped (today's partition exists, made first).
    for (const partition of expired) {
      if (HISTORY_DAY_PARTITION.test(partition.name)) {
        dropped.keptSkipped += await keepSkippedWhileDisabled(partition.name).affected({}, this.database);
      }
    }
    dropped.deliveries = (await EXPIRED_DELIVERIES.one({ retentionDays }, this.database))?.n ?? 0;
    for (const partition of expired) {
      if (partition.parent !== null) {
        const detach = partition.detaching ? finalizeDetach : detachConcurrently;
        await detach(partition.parent, partition.name).affected({}, this.database);
      }
      await dropTable(partition.name).affected({}, this.database);
      dropped.partitions += 1;
      if (partition.name.startsWith('webhook_delivery_attempt_')) dropped.attempts += partition.estimated_rows;
    }
    return dropped;
  }
}
