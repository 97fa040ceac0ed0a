import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { freshDatabase } from '../../../test/support/test-database';
import { EntityStatements } from './entity-statements';
import { SqlStatements } from './sql-statements';

@Entity('statement_probe')
class ProbeEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text', nullable: true }) label!: string | null;
  @Column({ type: 'jsonb', nullable: true }) title!: Record<string, string> | null;
  @Column({ type: 'jsonb', nullable: true }) links!: Array<Record<string, unknown>> | null;
  @Column({ type: 'text', array: true }) tags!: string[];
  @Column({ name: 'starts_at', type: 'timestamptz', precision: 3, nullable: true }) startsAt!: Date | null;
  @Column({ type: 'boolean' }) hidden!: boolean;
}

/** Row statements built from entity metadata, on real PostgreSQL, over a table of their own. */
describe('EntityStatements', () => {
  let db: DataSource;
  let rows: EntityStatements<ProbeEntity>;
  let statements: SqlStatements;

  before(async () => {
    db = new DataSource({ type: 'postgres', url: await freshDatabase(), entities: [ProbeEntity] });
    await db.initialize();
    await db.query(
      `CREATE TABLE statement_probe (id text PRIMARY KEY, label text, title jsonb, links jsonb, tags text[] NOT NULL,
         starts_at timestamptz(3), hidden boolean NOT NULL)`,
    );
    rows = new EntityStatements(db, ProbeEntity);
    statements = new SqlStatements(db);
  });
  after(async () => db.destroy());

  function probe(id: string): ProbeEntity {
    return Object.assign(new ProbeEntity(), {
      id,
      label: 'a',
      title: { en: 'Title' },
      links: [{ href: 'https://example.com' }],
      tags: ['x', 'y'],
      startsAt: new Date('2030-01-02T03:04:05.678Z'),
      hidden: false,
    });
  }

  async function read(id: string): Promise<ProbeEntity | null> {
    const found = await statements.rows(rows.select('WHERE id = $1'), [id]);
    return found[0] === undefined ? null : rows.hydrate(found[0]);
  }

  it('reads back what it inserted exactly as TypeORM would, jsonb arrays and text arrays included', async () => {
    await statements.affected(rows.insert, rows.insertValues(probe('p1')));
    const mine = await read('p1');
    const typeorms = await db.getRepository(ProbeEntity).findOneByOrFail({ id: 'p1' });
    assert.deepEqual({ ...mine }, { ...typeorms });
    assert.deepEqual({ ...mine }, { ...probe('p1') });
  });

  it('refuses to insert an entity missing a column that is not nullable', async () => {
    const incomplete = probe('p2') as Partial<ProbeEntity>;
    delete incomplete.tags;
    assert.throws(() => rows.insertValues(incomplete as ProbeEntity), /tags must be set/);
  });

  it('updates only the columns that changed since the row was read, and nothing when none did', async () => {
    await statements.affected(rows.insert, rows.insertValues(probe('p3')));
    const entity = await read('p3');
    assert.ok(entity !== null);
    assert.equal(rows.updateOf(entity), null, 'nothing changed, nothing to write');
    entity.title = { en: 'Renamed' };
    entity.startsAt = new Date('2031-01-01T00:00:00.000Z');
    entity.tags = ['x', 'y'];
    const update = rows.updateOf(entity);
    assert.ok(update !== null);
    assert.equal(update.statement.text, 'UPDATE "statement_probe" SET "title" = $2, "starts_at" = $3 WHERE "id" = $1');
    // Another writer's change to a column this update does not name survives it.
    await db.query(`UPDATE statement_probe SET label = 'theirs' WHERE id = 'p3'`);
    await statements.affected(update.statement, update.values);
    assert.deepEqual(
      { ...(await read('p3')) },
      { ...probe('p3'), label: 'theirs', title: { en: 'Renamed' }, startsAt: entity.startsAt },
    );
  });

  it('writes every column of an entity it did not read', () => {
    const update = rows.updateOf(probe('p4'));
    assert.ok(update !== null);
    assert.equal(update.values.length, 7);
  });
});
