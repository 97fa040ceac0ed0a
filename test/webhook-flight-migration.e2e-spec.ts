import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { databaseBefore, insertSubscriptionRows, withMigrations } from './support/migration-database';

const MOVE = '1763900025000-DeliveryFlightLists';

/**
 * The lists of leases in flight move from the turn rows into a table of
 * their own, and back on revert, none lost: a deploy while deliveries are in
 * flight keeps counting them against their subscriptions' caps.
 */
describe('migration DeliveryFlightLists', () => {
  let db: DataSource;
  let url: string;

  before(async () => {
    ({ url, db } = await databaseBefore('flight_lists', MOVE));
    await insertSubscriptionRows(db, 'org_lists', ['whk_busy', 'whk_quiet']);
    await db.query(
      `INSERT INTO webhook_delivery_turn (subscription_id, in_flight)
       VALUES ('whk_busy', '{dlv_1,dlv_2}'), ('whk_quiet', '{}')`,
    );
  });

  after(async () => {
    await db?.destroy();
  });

  it('moves each turn’s list of leases into the lists table, and back on revert', async () => {
    await withMigrations(url, { through: MOVE }, (source) => source.runMigrations());
    assert.deepEqual(
      await db.query(`SELECT subscription_id, in_flight FROM webhook_delivery_flight ORDER BY subscription_id`),
      [{ subscription_id: 'whk_busy', in_flight: ['dlv_1', 'dlv_2'] }],
    );
    const columns = await db.query<Array<{ column_name: string }>>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_delivery_turn'`,
    );
    assert.ok(!columns.some((column) => column.column_name === 'in_flight'), 'the turns no longer hold the lists');

    // A claim after the move replaces the list: the newest one goes back on revert.
    await db.query(`INSERT INTO webhook_delivery_flight (subscription_id, in_flight) VALUES ('whk_busy', '{dlv_3}')`);
    await withMigrations(url, { through: MOVE }, (source) => source.undoLastMigration());
    assert.deepEqual(
      await db.query(`SELECT subscription_id, in_flight FROM webhook_delivery_turn ORDER BY subscription_id`),
      [
        { subscription_id: 'whk_busy', in_flight: ['dlv_3'] },
        { subscription_id: 'whk_quiet', in_flight: [] },
      ],
    );
    const [left] = await db.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pg_class WHERE relname = 'webhook_delivery_flight'`,
    );
    assert.deepEqual(left, { n: 0 });
  });
});
