import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ServiceSettings1763900000000 implements MigrationInterface {
  name = 'ServiceSettings1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE service_setting (name text PRIMARY KEY, value text NOT NULL)`);
    // Two v4 UUIDs give 244 random bits from PostgreSQL's strong random source.
    await queryRunner.query(
      `INSERT INTO service_setting (name, value)
       VALUES ('cursor_signing_key', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE service_setting`);
  }
}
