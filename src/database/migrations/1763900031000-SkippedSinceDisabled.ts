import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where in the queue's numbering a subscription was disabled: a number drawn
 * from `webhook_delivery_seq` by the attempt that disables it. A delivery
 * skipped because the subscription was off draws its number after reading
 * the disable as committed, so it is numbered above this mark, whenever its
 * publishing transaction began; its `created_at` (that transaction's start)
 * can be older than `disabled_at`, which is why a window of times alone can
 * miss it. Null while enabled, for a subscription created disabled, and for
 * one disabled by a build before this one (which recovers by time alone).
 */
export class SkippedSinceDisabled1763900031000 implements MigrationInterface {
  name = 'SkippedSinceDisabled1763900031000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_subscription ADD COLUMN disabled_seq bigint`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_subscription DROP COLUMN disabled_seq`);
  }
}
