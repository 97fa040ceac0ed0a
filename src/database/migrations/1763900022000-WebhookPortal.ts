import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook portal's links and sessions. Only SHA-256 hashes of the link
 * tokens and session cookies are stored, so a copy of the database opens
 * nothing. Both live here rather than in one process's memory so that every
 * instance sees a revocation at once: each portal request reads its session
 * row, no cache in between.
 */
export class WebhookPortal1763900022000 implements MigrationInterface {
  name = 'WebhookPortal1763900022000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE portal_link (
         token_hash text COLLATE "C" PRIMARY KEY,
         account_type text NOT NULL CHECK (account_type IN ('organiser', 'venue')),
         account_id text COLLATE "C" NOT NULL,
         read_only boolean NOT NULL,
         created_at timestamptz(3) NOT NULL DEFAULT now(),
         expires_at timestamptz(3) NOT NULL,
         opened_at timestamptz(3),
         revoked_at timestamptz(3)
       )`,
    );
    await queryRunner.query(
      `CREATE INDEX portal_link_unopened_idx ON portal_link (account_type, account_id)
        WHERE opened_at IS NULL AND revoked_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE portal_session (
         id text COLLATE "C" PRIMARY KEY,
         token_hash text COLLATE "C" NOT NULL UNIQUE,
         account_type text NOT NULL CHECK (account_type IN ('organiser', 'venue')),
         account_id text COLLATE "C" NOT NULL,
         read_only boolean NOT NULL,
         csrf_token text NOT NULL,
         created_at timestamptz(3) NOT NULL DEFAULT now(),
         last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
         revoked_at timestamptz(3),
         flashes jsonb NOT NULL DEFAULT '[]'::jsonb,
         secret_reveal_webhook_id text COLLATE "C"
       )`,
    );
    await queryRunner.query(
      `CREATE INDEX portal_session_live_idx ON portal_session (account_type, account_id) WHERE revoked_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE portal_session`);
    await queryRunner.query(`DROP TABLE portal_link`);
  }
}
