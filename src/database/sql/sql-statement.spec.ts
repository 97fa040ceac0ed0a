import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { QueryArrayConfig, QueryArrayResult } from 'pg';
import { DataSource } from 'typeorm';
import { freshDatabase } from '../../../test/support/test-database';
import { Transaction } from '../unit-of-work';
import { column, defineColumns, isoTime, isoTimeOrNull } from './sql-columns';
import { joinSql, sql, sqlText } from './sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from './sql-statement';
import { Database } from './sql-target';

const INSERT_PROBE = defineStatement<{ id: string; label: string | null; tags: string[] }, { id: string }>(
  (p) => sql`INSERT INTO sql_probe (id, label, tags) VALUES (${p.id}, ${p.label}, ${p.tags}) RETURNING id`,
  { prepared: true },
);
const LABEL_OF = defineStatement<{ id: string }, { label: string | null }>(
  (p) => sql`SELECT label FROM sql_probe WHERE id = ${p.id}`,
  { prepared: false },
);
const COUNT = defineStatement<NoParams, { n: number }>(() => sql`SELECT count(*)::int AS n FROM sql_probe`, {
  prepared: true,
});

/** The SQL kit on real PostgreSQL, over a table of its own. */
describe('SqlStatement', () => {
  let dataSource: DataSource;
  let database: Database;

  before(async () => {
    dataSource = new DataSource({ type: 'postgres', url: await freshDatabase(), entities: [] });
    await dataSource.initialize();
    await dataSource.query(`CREATE TABLE sql_probe (id text PRIMARY KEY, label text, tags text[] NOT NULL)`);
    database = new Database(dataSource);
  });
  after(async () => dataSource.destroy());

  it('compiles named parameters to $n once, in order of first use, one number per name', () => {
    const statement = defineStatement<{ a: number; b: number }>(
      (p) => sql`SELECT ${p.b}::int + ${p.a}::int - ${p.b}::int`,
      { prepared: false },
    );
    assert.equal(statement.text, 'SELECT $1::int + $2::int - $1::int');
    assert.deepEqual(statement.parameterNames, ['b', 'a']);
    assert.deepEqual(statement.values({ a: 1, b: 2 }), [2, 1]);
  });

  it('splices fragments (column lists, conditions) and their parameters into the text', () => {
    const columns = sqlText('id, label');
    const statement = defineStatement<{ id: string; owner: string }>(
      (p) => {
        const conditions = [sql`id = ${p.id}`, sql`owner = ${p.owner}`, sqlText('deleted_at IS NULL')];
        return sql`SELECT ${columns} FROM t WHERE ${joinSql(conditions, ' AND ')} OR parent = ${p.id}`;
      },
      { prepared: false },
    );
    assert.equal(
      statement.text,
      'SELECT id, label FROM t WHERE id = $1 AND owner = $2 AND deleted_at IS NULL OR parent = $1',
    );
  });

  it('never writes a value into the text: a plain string interpolation is refused', () => {
    const id = "x'; DROP TABLE sql_probe; --";
    assert.throws(() => sql`SELECT ${id as never}`, /named parameters and fragments only/);
  });

  it('refuses a parameter left undefined, and sends null as SQL NULL', async () => {
    assert.throws(() => INSERT_PROBE.values({ id: 'p0', tags: [] } as never), /SQL parameter "label" was not given/);
    await INSERT_PROBE.rows({ id: 'p1', label: null, tags: ['a'] }, database);
    assert.deepEqual(await LABEL_OF.one({ id: 'p1' }, database), { label: null });
  });

  it('names a prepared statement after its text, and sends an unprepared one unnamed', () => {
    assert.match(INSERT_PROBE.name ?? '', /^s_[0-9a-f]{20}$/);
    const again = defineStatement<{ id: string; label: string | null; tags: string[] }>(
      (p) => sql`INSERT INTO sql_probe (id, label, tags) VALUES (${p.id}, ${p.label}, ${p.tags}) RETURNING id`,
      { prepared: true },
    );
    assert.equal(again.name, INSERT_PROBE.name);
    assert.equal(LABEL_OF.name, undefined);
  });

  it('sends a run as its values alone, the statement’s name, text, type parsers and row mode inherited from one config: pg copies only what a config holds itself', async () => {
    const sent: QueryArrayConfig[] = [];
    const recording = {
      sqlConnection: () => ({
        query: async (config: QueryArrayConfig) => {
          sent.push(config);
          return { rows: [], fields: [], rowCount: 0, command: 'SELECT', oid: 0 } as unknown as QueryArrayResult;
        },
      }),
    };
    await INSERT_PROBE.rows({ id: 'r1', label: 'a', tags: [] }, recording);
    await INSERT_PROBE.rows({ id: 'r2', label: 'b', tags: [] }, recording);
    const [first, second] = sent;
    assert.deepEqual(Object.keys(first ?? {}), ['values']);
    assert.deepEqual(first?.values, ['r1', 'a', []]);
    assert.deepEqual(second?.values, ['r2', 'b', []]);
    assert.equal(Object.getPrototypeOf(first), Object.getPrototypeOf(second), 'one inherited config for every run');
    assert.equal(first?.name, INSERT_PROBE.name);
    assert.equal(first?.text, INSERT_PROBE.text);
    assert.equal(first?.rowMode, 'array');
  });

  it('prepares a prepared statement on the connection under its name, from the inherited config', async () => {
    await dataSource.transaction(async (manager) => {
      const tx = new Transaction(manager);
      assert.equal(typeof (await COUNT.one(NO_PARAMS, tx))?.n, 'number');
      const names = await manager.query(`SELECT name FROM pg_prepared_statements WHERE name = $1`, [COUNT.name]);
      assert.deepEqual(names, [{ name: COUNT.name }]);
    });
  });

  it('runs inside a transaction on its connection: it sees the uncommitted rows, and a rollback takes them', async () => {
    await assert.rejects(
      dataSource.transaction(async (manager) => {
        const tx = new Transaction(manager);
        await INSERT_PROBE.rows({ id: 'p2', label: 'inside', tags: [] }, tx);
        assert.deepEqual(await LABEL_OF.one({ id: 'p2' }, tx), { label: 'inside' });
        assert.equal(await LABEL_OF.one({ id: 'p2' }, database), null, 'not visible outside before commit');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(await LABEL_OF.one({ id: 'p2' }, database), null);
    assert.deepEqual(await COUNT.one(NO_PARAMS, database), { n: 1 });
  });

  it('counts the rows a write touched', async () => {
    const relabel = defineStatement<{ label: string }>((p) => sql`UPDATE sql_probe SET label = ${p.label}`, {
      prepared: false,
    });
    assert.equal(await relabel.affected({ label: 'all' }, database), 1);
  });

  it("reads a view's timestamps as stored and hands them over as ISO strings; other statements keep pg's Date", async () => {
    const PROBE_VIEW = defineColumns({
      id: column<string>('s.id'),
      at: isoTime('s.at'),
      gone: isoTimeOrNull('s.gone'),
    });
    const viewRead = defineStatement<NoParams, typeof PROBE_VIEW.View>(
      () =>
        sql`SELECT ${PROBE_VIEW.select} FROM (SELECT 'x' AS id, '2026-11-27T05:59:41.12Z'::timestamptz AS at, NULL::timestamptz AS gone) s`,
      { prepared: true },
    );
    assert.doesNotMatch(viewRead.text, /to_char/, 'the SELECT list reads the stored value, with no formatting in SQL');
    assert.deepEqual(await viewRead.one(NO_PARAMS, database), { id: 'x', at: '2026-11-27T05:59:41.120Z', gone: null });

    const plainRead = defineStatement<NoParams, { at: Date }>(
      () => sql`SELECT '2026-11-27T05:59:41.12Z'::timestamptz AS at`,
      { prepared: false },
    );
    const plain = await plainRead.one(NO_PARAMS, database);
    assert.ok(plain?.at instanceof Date);
    assert.match(PROBE_VIEW.json.parts[0] as string, /to_char\(s\.at /, 'a JSON view formats its timestamps in SQL');
  });

  it('builds each row as a plain object of its columns, with the values and types pg gives', async () => {
    const read = defineStatement<NoParams, Record<string, unknown>>(
      () => sql`SELECT 'a'::text AS "name", NULL::text AS "missing", true AS "flag", 7::int AS "count",
                       ARRAY['x', 'y'] AS "tags", '2026-01-02T03:04:05Z'::timestamptz AS "at"`,
      { prepared: true },
    );
    for (let run = 0; run < 2; run += 1) {
      const row = await read.one(NO_PARAMS, database);
      assert.deepEqual(row, {
        name: 'a',
        missing: null,
        flag: true,
        count: 7,
        tags: ['x', 'y'],
        at: new Date('2026-01-02T03:04:05Z'),
      });
      assert.equal(Object.getPrototypeOf(row), Object.prototype);
    }
  });

  it("keeps a column named __proto__ as an own property, never as the row's prototype", async () => {
    const read = defineStatement<NoParams, Record<string, unknown>>(
      () => sql`SELECT 'p'::text AS "__proto__", 1::int AS "n"`,
      { prepared: false },
    );
    const row = await read.one(NO_PARAMS, database);
    assert.ok(row !== null);
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, 'p');
  });

  it('gives a repeated column name the later value, as pg does', async () => {
    const read = defineStatement<NoParams, Record<string, unknown>>(() => sql`SELECT 1::int AS "n", 2::int AS "n"`, {
      prepared: false,
    });
    assert.deepEqual(await read.one(NO_PARAMS, database), { n: 2 });
  });

  it('follows the columns when the same statement returns other ones (a SELECT * after the table changed)', async () => {
    await dataSource.query(`CREATE TABLE sql_shape (id text PRIMARY KEY)`);
    await dataSource.query(`INSERT INTO sql_shape (id) VALUES ('one')`);
    const all = defineStatement<NoParams, Record<string, unknown>>(() => sql`SELECT * FROM sql_shape`, {
      prepared: false,
    });
    assert.deepEqual(await all.rows(NO_PARAMS, database), [{ id: 'one' }]);
    await dataSource.query(`ALTER TABLE sql_shape ADD COLUMN label text NOT NULL DEFAULT 'new'`);
    assert.deepEqual(await all.rows(NO_PARAMS, database), [{ id: 'one', label: 'new' }]);
  });
});
