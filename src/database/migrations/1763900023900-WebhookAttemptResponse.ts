import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the receiver answered, per attempt, from now on: its HTTP status (null
 * when no response came: timeout, network error, blocked host) and the first
 * KiB of its response body as text. Older attempts keep nulls. Only the
 * internal delivery log and the dashboard show them, never the public API.
 * Nullable columns without a default: adding them rewrites nothing.
 */
export class WebhookAttemptResponse1763900023900 implements MigrationInterface {
  name = 'WebhookAttemptResponse1763900023900';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_delivery_attempt
        ADD COLUMN http_status smallint CHECK (http_status BETWEEN 100 AND 999),
        ADD COLUMN response_excerpt text CHECK (octet_length(response_excerpt) <= 4096)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE webhook_delivery_attempt DROP COLUMN http_status, DROP COLUMN response_excerpt`,
    );
  }
}
