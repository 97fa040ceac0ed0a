import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The instances serving this database (src/database/instances/instance-registry.ts):
 * each records itself at start, heartbeats, and deletes its row when it
 * stops. Liveness is judged on the database clock (`last_seen_at` is always
 * the server's `now()`), so instances with skewed clocks agree on who is gone.
 * `pool_max` and `dedicated_connections` are what the connection budget adds up.
 */
export class ServiceInstances1763900020500 implements MigrationInterface {
  name = 'ServiceInstances1763900020500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE service_instance (
        id text PRIMARY KEY,
        host text NOT NULL,
        role text NOT NULL,
        version text NOT NULL,
        pool_max integer NOT NULL CHECK (pool_max >= 0),
        dedicated_connections integer NOT NULL CHECK (dedicated_connections >= 0),
        started_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE service_instance`);
  }
}
