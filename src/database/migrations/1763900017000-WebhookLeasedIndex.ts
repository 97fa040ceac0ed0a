import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pending rows that carry a lease (in flight, or a lease that expired):
 * a handful per subscription, so counting a subscription's attempts in
 * flight reads only these. Without it a claim (src/webhooks/delivery/
 * delivery-queue.repository.ts) read every pending row of each
 * subscription to count them, so a backlog after an outage made every claim
 * slower exactly while catching up.
 */
export class WebhookLeasedIndex1763900017000 implements MigrationInterface {
  name = 'WebhookLeasedIndex1763900017000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_leased_idx ON webhook_delivery (subscription_id)
        WHERE status = 'pending' AND lease_expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX webhook_delivery_leased_idx`);
  }
}
