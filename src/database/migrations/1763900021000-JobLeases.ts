import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per scheduled job (src/database/jobs/scheduled-jobs.ts): who holds
 * its lease and until when, and when its last run started, both on the
 * database's clock, so that whatever the number of instances and their
 * clocks, a job runs on one instance at a time and once per period.
 */
export class JobLeases1763900021000 implements MigrationInterface {
  name = 'JobLeases1763900021000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE job_lease (
        name text PRIMARY KEY,
        holder text NOT NULL,
        leased_until timestamptz NOT NULL,
        last_started_at timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE job_lease`);
  }
}
