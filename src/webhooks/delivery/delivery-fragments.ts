/**
 * SQL written whole into the statements of more than one repository: the
 * move of final deliveries into the history (the queue's drop, the attempt
 * records), the commit that does not wait for the WAL flush (the claim, the
 * attempt records) and a subscription's newest list of leases (the claim, a
 * resend's lease in delivery-history.repository.ts). One text each, so the
 * statements that share it cannot drift apart.
 */

import { sql, sqlText, type SqlFragment, type SqlValue } from '../../database/sql/sql-fragment';

/**
 * Lets the statement's transaction commit without waiting for the WAL flush
 * (`synchronous_commit = off`, for that transaction only). Used for what the
 * worker writes about attempts: leases and attempt records. A database crash
 * can forget the last fraction of a second of them (never an event: the
 * outbox rows are committed by the publishing transaction, flushed as
 * always), and forgetting one only makes the delivery due again, which
 * at-least-once delivery covers. Waiting for the flush would hold each
 * subscription's row lock through it, so its attempts would be recorded one
 * flush at a time.
 */
export const COMMIT_WITHOUT_FLUSH = sqlText(`set_config('synchronous_commit', 'off', true)`);

/**
 * Moves queue rows into today's history in one statement: `gone` is the
 * DELETE ... RETURNING of the rows, with `final_status` and `final_attempts`
 * columns; rows of the history get `completed_at` = now().
 */
export function intoHistory(gone: string): SqlFragment {
  return sqlText(`INSERT INTO webhook_delivery_history
             (id, seq, subscription_id, event_type, subject_id, payload, status, attempts, last_status, created_at,
              trace_id, retry_from)
      SELECT ${gone}.id, ${gone}.seq, ${gone}.subscription_id, ${gone}.event_type, ${gone}.subject_id,
             ${gone}.payload, ${gone}.final_status, ${gone}.final_attempts, ${gone}.final_last_status,
             ${gone}.created_at, ${gone}.trace_id, ${gone}.retry_from
        FROM ${gone}`);
}

/** Above every list's number: where a backward scan of a subscription's lists starts. */
const AFTER_EVERY_LIST = sqlText('9223372036854775807');

/**
 * The newest list of leases of a subscription (`subscriptionId`, an SQL
 * value): `n` and `in_flight`, or no row. Every statement that leases
 * replaces the list it read with a new one, so the newest is the first entry
 * of a backward scan of the primary key from the subscription's end, whatever
 * a held horizon keeps behind it. Asked newest-first (`ORDER BY n DESC
 * LIMIT 1`), the planner, whose statistics count one list per subscription,
 * reads every version of the subscription's lists and sorts them; a row
 * comparison leaves the backward scan the only cheap plan.
 */
export function newestList(subscriptionId: SqlValue): SqlFragment {
  return sql`SELECT l.n, l.in_flight FROM (
      SELECT f.subscription_id, f.n, f.in_flight FROM webhook_delivery_flight f
       WHERE (f.subscription_id, f.n) <= (${subscriptionId}::text COLLATE "C", ${AFTER_EVERY_LIST})
       ORDER BY f.subscription_id DESC, f.n DESC LIMIT 1) l
     WHERE l.subscription_id = ${subscriptionId}`;
}
