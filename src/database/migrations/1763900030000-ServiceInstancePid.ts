import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The process id of each instance in the registry, beside its host: what
 * matches a row of `GET /internal/instances` to a process an operator can
 * see (`ps`, the start-up banner), and what tells a start on the embedded
 * default that a row of its machine belongs to a process no longer running.
 * Null for rows written by builds before this one, which keep writing
 * theirs without it.
 */
export class ServiceInstancePid1763900030000 implements MigrationInterface {
  name = 'ServiceInstancePid1763900030000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE service_instance ADD COLUMN pid integer CHECK (pid > 0)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE service_instance DROP COLUMN pid`);
  }
}
