import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dashboard sessions, shared by every instance on the database, so a sign-in
 * on one works on all and a sign-out ends it on all at once. A row is named
 * by the SHA-256 of the cookie value, never by the value itself: reading the
 * table gives nobody a cookie. `expires_at` is the earlier of the idle and
 * the absolute limit, judged on the database clock and indexed so expired
 * rows are purged in small batches. `state` holds the flash messages and the
 * values shown once (those sealed with a key only the browser's cookie
 * yields), bounded so a session never grows past a few pages' worth.
 */
export class DashboardSessions1763900023000 implements MigrationInterface {
  name = 'DashboardSessions1763900023000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE dashboard_session (
        token_hash bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
        csrf_secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        state jsonb NOT NULL DEFAULT '{"flashes": [], "oneTime": []}'::jsonb
          CHECK (octet_length(state::text) <= 65536)
      )`);
    await queryRunner.query(`CREATE INDEX dashboard_session_expires_at ON dashboard_session (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE dashboard_session`);
  }
}
