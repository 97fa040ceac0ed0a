import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyCap1763900007300 implements MigrationInterface {
  name = 'IdempotencyCap1763900007300';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Finds an organiser's newest keys without a sort: the per-organiser cap trims below the cap-th one.
    await queryRunner.query(
      `CREATE INDEX idempotency_key_organiser_created_idx ON idempotency_key (organizer_id, created_at, key)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX idempotency_key_organiser_created_idx`);
  }
}
