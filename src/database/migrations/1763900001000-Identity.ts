import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Identity1763900001000 implements MigrationInterface {
  name = 'Identity1763900001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE organiser (
        id text COLLATE "C" PRIMARY KEY,
        name text NOT NULL,
        placeholder boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE api_key (
        id text COLLATE "C" PRIMARY KEY,
        key_hash text NOT NULL,
        key_prefix text NOT NULL,
        principal_type text NOT NULL CHECK (principal_type IN ('organiser', 'venue', 'professional')),
        principal_id text COLLATE "C" NOT NULL,
        scopes text[] NOT NULL,
        name text,
        created_by_role text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        revoked_at timestamptz(3),
        last_used_at timestamptz(3)
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX api_key_hash_key ON api_key (key_hash)`);
    await queryRunner.query(`CREATE INDEX api_key_principal_idx ON api_key (principal_type, principal_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_key`);
    await queryRunner.query(`DROP TABLE organiser`);
  }
}
