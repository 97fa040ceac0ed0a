import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `DeliveryQueueAndHistory` was changed after some databases had applied it:
 * the builds of its first day wrote the queue's turns without the columns
 * the later migrations read (`in_flight`, moved out by `DeliveryFlightLists`;
 * `from_seq`, which `StrandedDeliveries` sets), or without the turns at all.
 * A database migrated by one of those builds would fail part-way through the
 * later migrations and be left between two schemas, with no build able to
 * deliver. This refuses such a database before any later migration runs,
 * saying how to go on: revert `DeliveryQueueAndHistory` with the build that
 * applied it (its own `down` knows its shape), then start this build, which
 * applies the migration as it is now.
 */
export class DeliveryQueueShapeChecked1763900024500 implements MigrationInterface {
  name = 'DeliveryQueueShapeChecked1763900024500';

  async up(queryRunner: QueryRunner): Promise<void> {
    const applied = new Set(
      ((await queryRunner.query(`SELECT name FROM schema_migration`)) as Array<{ name: string }>).map(
        (row) => row.name,
      ),
    );
    const columns = new Set(
      (
        (await queryRunner.query(
          `SELECT column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = 'webhook_delivery_turn'`,
        )) as Array<{ column_name: string }>
      ).map((row) => row.column_name),
    );
    const expected = ['subscription_id', 'turn_at', 'idle', 'from_seq'];
    // DeliveryFlightLists moves the in-flight lists off the turns: before it, the turns hold them.
    if (!applied.has('DeliveryFlightLists1763900025000')) expected.push('in_flight');
    const missing = expected.filter((column) => !columns.has(column));
    if (missing.length === 0) return;
    const what =
      columns.size === 0 ? 'the table webhook_delivery_turn' : `webhook_delivery_turn's ${missing.join(', ')}`;
    throw new Error(
      `this database was migrated by a build whose DeliveryQueueAndHistory1763900024000 differs from this one's: ` +
        `${what} is missing, and the migrations after it would stop part-way. Nothing was changed. ` +
        'With the build that applied it, run `npm run migration:revert` until DeliveryQueueAndHistory1763900024000 ' +
        'is reverted, then start this build.',
    );
  }

  /** A check: nothing to undo. */
  async down(): Promise<void> {}
}
