import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { databaseBefore, insertSubscriptionRows, withMigrations } from './support/migration-database';

const REPAIR = '1763900026000-StrandedDeliveries';

/**
 * A delivery that an earlier claim left behind its subscription's position
 * (a publication that committed while the claim read the queue) is never
 * claimed; the upgrade moves each such position back to the oldest waiting
 * delivery, and leaves every other position where it was.
 */
describe('migration StrandedDeliveries', () => {
  let db: DataSource;
  let url: string;

  before(async () => {
    ({ url, db } = await databaseBefore('stranded', REPAIR));
    await insertSubscriptionRows(db, 'org_stranded', ['whk_stranded', 'whk_fine']);
    await db.query(
      `INSERT INTO webhook_delivery (id, seq, subscription_id, event_type, subject_id, payload, next_attempt_at)
       VALUES ('dlv_left_behind', 100, 'whk_stranded', 'order.confirmed', 'ord_1', '\\x7b7d', now()),
              ('dlv_ahead', 5000, 'whk_stranded', 'order.confirmed', 'ord_2', '\\x7b7d', now()),
              ('dlv_fine', 7000, 'whk_fine', 'order.confirmed', 'ord_3', '\\x7b7d', now())`,
    );
    // As an earlier claim left them: one position past a waiting delivery, one before its oldest.
    await db.query(
      `UPDATE webhook_delivery_turn SET from_seq = CASE subscription_id WHEN 'whk_stranded' THEN 5000 ELSE 6000 END`,
    );
  });

  after(async () => {
    await db?.destroy();
  });

  it('moves a position back to the oldest waiting delivery left behind it, and no other', async () => {
    await withMigrations(url, { through: REPAIR }, (source) => source.runMigrations());
    assert.deepEqual(
      await db.query(`SELECT subscription_id, from_seq::int AS from_seq FROM webhook_delivery_turn ORDER BY 1`),
      [
        { subscription_id: 'whk_fine', from_seq: 6000 },
        { subscription_id: 'whk_stranded', from_seq: 100 },
      ],
    );
  });
});
