import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { databaseBefore, withMigrations } from './support/migration-database';

const CHECK = '1763900024500-DeliveryQueueShapeChecked';

/**
 * A database whose DeliveryQueueAndHistory left the turns without a column
 * the later migrations read is refused before any of them runs, with the way
 * on, instead of being left between two schemas.
 */
describe('migration DeliveryQueueShapeChecked', () => {
  let db: DataSource;
  let url: string;

  before(async () => {
    ({ url, db } = await databaseBefore('queue_shape', CHECK));
  });

  after(async () => {
    await db?.destroy();
  });

  it('refuses turns without from_seq, naming it and the way on, and applies no later migration', async () => {
    await db.query(`ALTER TABLE webhook_delivery_turn DROP COLUMN from_seq`);
    await assert.rejects(
      withMigrations(url, 'all', (source) => source.runMigrations({ transaction: 'each' })),
      (error: Error) =>
        error.message.includes("webhook_delivery_turn's from_seq is missing") &&
        error.message.includes('run `npm run migration:revert` until DeliveryQueueAndHistory1763900024000'),
    );
    const applied = await db.query<Array<{ name: string }>>(`SELECT name FROM schema_migration`);
    const names = applied.map((row) => row.name);
    assert.ok(names.includes('DeliveryQueueAndHistory1763900024000'));
    assert.ok(!names.some((name) => /DeliveryQueueShapeChecked|DeliveryFlightLists|StrandedDeliveries/.test(name)));
    const columns = await db.query<Array<{ column_name: string }>>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_delivery_turn'`,
    );
    assert.ok(
      columns.some((column) => column.column_name === 'in_flight'),
      'the turns keep their lists: nothing was moved',
    );
  });

  it('passes the queue as DeliveryQueueAndHistory makes it now, and the later migrations follow', async () => {
    await db.query(`ALTER TABLE webhook_delivery_turn ADD COLUMN from_seq bigint NOT NULL DEFAULT 0`);
    await withMigrations(url, 'all', (source) => source.runMigrations({ transaction: 'each' }));
    const applied = await db.query<Array<{ name: string }>>(`SELECT name FROM schema_migration`);
    assert.ok(applied.some((row) => row.name === 'DeliveryQueueShapeChecked1763900024500'));
    assert.ok(applied.some((row) => row.name === 'StrandedDeliveries1763900026000'));
  });
});
