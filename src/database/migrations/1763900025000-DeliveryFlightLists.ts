import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each subscription's list of leased deliveries moves off its turn row into
 * a table of its own that is only ever appended to: a claim that leases
 * writes a new list and deletes the one it read, instead of updating the
 * turn in place. A turn row was rewritten by nearly every claim, and while a
 * long transaction holds the xmin horizon none of its old versions can be
 * pruned: every read of the turn (each claim, each queueing trigger) then
 * walked a chain that grew by thousands of versions a second. The newest
 * list of a subscription is the first entry of a backward scan of the
 * primary key, whatever lies behind it. Lists are small and short-lived;
 * moving them copies one row per subscription.
 */
export class DeliveryFlightLists1763900025000 implements MigrationInterface {
  name = 'DeliveryFlightLists1763900025000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_delivery_flight (
        subscription_id text COLLATE "C" NOT NULL REFERENCES webhook_subscription (id) ON DELETE CASCADE,
        n bigint GENERATED ALWAYS AS IDENTITY,
        in_flight text[] COLLATE "C" NOT NULL,
        PRIMARY KEY (subscription_id, n)
      )`);
    await queryRunner.query(`
      INSERT INTO webhook_delivery_flight (subscription_id, in_flight)
      SELECT subscription_id, in_flight FROM webhook_delivery_turn WHERE cardinality(in_flight) > 0
       ORDER BY subscription_id`);
    await queryRunner.query(`ALTER TABLE webhook_delivery_turn DROP COLUMN in_flight`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_turn ADD COLUMN in_flight text[] COLLATE "C" NOT NULL DEFAULT '{}'`,
    );
    await queryRunner.query(`
      UPDATE webhook_delivery_turn t SET in_flight = f.in_flight
        FROM (SELECT DISTINCT ON (subscription_id) subscription_id, in_flight FROM webhook_delivery_flight
               ORDER BY subscription_id, n DESC) f
       WHERE f.subscription_id = t.subscription_id`);
    await queryRunner.query(`DROP TABLE webhook_delivery_flight`);
  }
}
