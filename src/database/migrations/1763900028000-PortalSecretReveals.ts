import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A portal session may owe several rotated secrets their one showing: the
 * subscriptions rotated and not yet shown, at most ten (an account has at
 * most ten subscriptions). Rotating one and then another before the first
 * one's page was loaded used to lose the first secret for good, since the
 * session kept a single id. The old column stays, unread, so that instances
 * of the previous build keep working while the others are replaced; a
 * pending showing it held is carried over.
 */
export class PortalSecretReveals1763900028000 implements MigrationInterface {
  name = 'PortalSecretReveals1763900028000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE portal_session
         ADD COLUMN secret_reveal_webhook_ids text[] COLLATE "C" NOT NULL DEFAULT '{}'
           CHECK (cardinality(secret_reveal_webhook_ids) <= 10)`,
    );
    await queryRunner.query(
      `UPDATE portal_session SET secret_reveal_webhook_ids = ARRAY[secret_reveal_webhook_id]
        WHERE secret_reveal_webhook_id IS NOT NULL AND revoked_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE portal_session DROP COLUMN secret_reveal_webhook_ids`);
  }
}
