import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dashboard session belongs to the admin token it was opened with: each
 * row keeps an HMAC of that token (never the token, nor a plain hash of it),
 * and a session is found only while the service runs with the same token.
 * Changing ADMIN_TOKEN therefore ends every session opened with the old one,
 * on every instance. Sessions opened before this column existed have none,
 * and end: their people sign in again once.
 */
export class DashboardSessionAdminToken1763900027000 implements MigrationInterface {
  name = 'DashboardSessionAdminToken1763900027000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE dashboard_session ADD COLUMN admin_token_id bytea CHECK (octet_length(admin_token_id) = 32)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE dashboard_session DROP COLUMN admin_token_id`);
  }
}
