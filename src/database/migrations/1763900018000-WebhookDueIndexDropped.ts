import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the index of pending deliveries by due time. Only the webhook lag
 * metric used it, and it misled the claim (src/webhooks/delivery/
 * delivery-queue.repository.ts): statistics taken while the queue is empty
 * (autovacuum's ANALYZE between bursts) say no delivery is pending or due, so
 * the planner took this small index as a free way to read "all pending
 * deliveries" and sorted them, for every subscription on every claim, where
 * the ordered pending index reads a handful. With a deep backlog that made
 * each claim cost in proportion to the backlog, exactly while catching up.
 * The lag metric now reads the pending index (once per scrape).
 */
export class WebhookDueIndexDropped1763900018000 implements MigrationInterface {
  name = 'WebhookDueIndexDropped1763900018000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS webhook_delivery_due_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_due_idx ON webhook_delivery (next_attempt_at) WHERE status = 'pending'`,
    );
  }
}
