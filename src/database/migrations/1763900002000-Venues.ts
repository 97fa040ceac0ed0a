import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Venues1763900002000 implements MigrationInterface {
  name = 'Venues1763900002000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE venue (
        id text COLLATE "C" PRIMARY KEY,
        name text,
        slug text,
        description jsonb,
        website_url text,
        category text,
        claim_status text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE venue_location (
        id text COLLATE "C" PRIMARY KEY,
        venue_id text COLLATE "C" NOT NULL REFERENCES venue (id) ON DELETE CASCADE,
        display_name text,
        address text,
        city text,
        country text,
        time_zone text NOT NULL DEFAULT 'UTC',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3)
      )`);
    // GET /v1/venues lists a venue's live locations oldest first.
    await queryRunner.query(
      `CREATE INDEX venue_location_live_idx ON venue_location (venue_id, created_at, id) WHERE deleted_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE venue_location`);
    await queryRunner.query(`DROP TABLE venue`);
  }
}
