import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ids of the webhook sealing keys each instance can open (its
 * WEBHOOK_SECRET_KEY and WEBHOOK_SECRET_KEY_PREVIOUS), so that
 * `webhooks:reseal-secrets` refuses while a live instance could not open
 * secrets re-sealed under the new key (it would answer GET /v1/webhooks with
 * 500 and sign no delivery until restarted). Null for rows written by builds
 * before this one: their keys are unknown, and a re-seal refuses on them too.
 */
export class ServiceInstanceSealingKeys1763900032000 implements MigrationInterface {
  name = 'ServiceInstanceSealingKeys1763900032000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE service_instance ADD COLUMN sealing_key_ids text[]`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE service_instance DROP COLUMN sealing_key_ids`);
  }
}
