import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Makes the statistics of the delivery queue true again after its ballast
 * (DeliveryQueueAndHistory1763900024000 writes 20,000 rows and deletes them,
 * then vacuums). A session reports what its statements did to the server's
 * statistics at most once a second: when its last report was under a second
 * before the DELETE, that DELETE is reported only after the VACUUM that
 * removed its rows, and `n_dead_tup`, which `webhook_queue_dead_rows` reads,
 * counts 20,000 rows that are gone until autovacuum runs. So a fresh install
 * showed a queue full of dead rows.
 *
 * On a fresh install this migration runs in the ballast's session: it has
 * the session report what it still holds, then vacuums again, and that
 * VACUUM's count is the last word. On an upgrade the VACUUM alone sets the
 * count right (the ballast's session ended long ago). VACUUM cannot run in a
 * transaction, hence `transaction = false`; there is nothing to undo.
 */
export class WebhookQueueDeadRowsCounted1763900029000 implements MigrationInterface {
  name = 'WebhookQueueDeadRowsCounted1763900029000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    // The session reports as it goes idle after this statement, so before the VACUUM arrives. PostgreSQL 14
    // has no such function: there the VACUUM alone, as on an upgrade.
    await queryRunner.query(
      `DO $$ BEGIN
         IF to_regprocedure('pg_catalog.pg_stat_force_next_flush()') IS NOT NULL THEN
           PERFORM pg_stat_force_next_flush();
         END IF;
       END $$`,
    );
    await queryRunner.query(`VACUUM webhook_delivery`);
  }

  async down(): Promise<void> {
    // Statistics only: nothing of the schema to take back.
  }
}
