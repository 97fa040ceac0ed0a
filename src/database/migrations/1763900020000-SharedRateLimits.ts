import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account budgets every instance draws on (src/common/rate-limit/
 * database-budget.storage.ts): one row per budget key, rewritten in place
 * when a new window starts, so the table holds one row per account and
 * budget and needs no purge. UNLOGGED: a counter is worth a minute, not a
 * write-ahead log record per reservation; after a server crash the counters
 * start empty, which costs at most one window's budget.
 */
export class SharedRateLimits1763900020000 implements MigrationInterface {
  name = 'SharedRateLimits1763900020000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE rate_limit_counter (
        key text PRIMARY KEY,
        window_start timestamptz NOT NULL,
        used integer NOT NULL CHECK (used >= 0),
        last_grant integer NOT NULL CHECK (last_grant >= 0)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE rate_limit_counter`);
  }
}
