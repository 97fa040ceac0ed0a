import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { freshDatabase } from '../../../test/support/test-database';
import type { ServiceSettings } from '../../database/service-settings';
import type { Page } from '../envelope/page';
import { DomainError } from '../errors/domain-error';
import { column, defineColumns } from '../../database/sql/sql-columns';
import { sql } from '../../database/sql/sql-fragment';
import { Database } from '../../database/sql/sql-target';
import { CursorCodec } from '../../../libs/cursor/cursor-codec';
import { defineKeysetList, KeysetPager } from './keyset-pager';

const PROBE_VIEW = defineColumns({ id: column<string>('p.id'), at: column<string>('p.at::text') });
type ProbeRow = typeof PROBE_VIEW.View;

const LIST = defineKeysetList<{ kind: string }, ProbeRow>({
  select: PROBE_VIEW.select,
  from: 'pager_probe p',
  idColumn: 'p.id',
  where: (p) => [sql`p.kind = ${p.kind}`],
  anchorTable: 'pager_probe',
  orderings: {
    default: { name: 'probe:at_desc', column: 'p.at', direction: 'DESC' },
    updatedAfter: { name: 'probe:at_asc', column: 'p.at', direction: 'ASC' },
  },
  prepared: true,
});
const SHOWN = { kind: 'shown' };
const LIST_ORDERING = { name: 'probe:at_desc', column: 'p.at', direction: 'DESC' } as const;

/** The keyset pager on real PostgreSQL, over a table of its own (no context's tables). */
describe('KeysetPager', () => {
  let db: DataSource;
  let pager: KeysetPager;
  const signingKey = randomBytes(32).toString('hex');

  before(async () => {
    // One connection, so the prepared-statement test sees the connection the pager used.
    db = new DataSource({ type: 'postgres', url: await freshDatabase(), extra: { max: 1 } });
    await db.initialize();
    await db.query(
      `CREATE TABLE pager_probe (id text COLLATE "C" PRIMARY KEY, at timestamptz(3) NOT NULL, kind text NOT NULL)`,
    );
    pager = new KeysetPager(
      { cursorSigningKey: async () => signingKey } as unknown as ServiceSettings,
      new Database(db),
    );
    await pager.onModuleInit();
  });
  after(async () => db.destroy());

  async function load(rows: Array<{ id: string; at: Date; kind?: string }>): Promise<void> {
    await db.query('TRUNCATE pager_probe');
    for (const row of rows) {
      await db.query('INSERT INTO pager_probe (id, at, kind) VALUES ($1, $2, $3)', [
        row.id,
        row.at,
        row.kind ?? 'shown',
      ]);
    }
  }

  async function walk(limit: number, updatedAfter: Date | null = null): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages += 1) {
      const page: Page<string> = (await pager.page(LIST, SHOWN, { limit, cursor, updatedAfter })).map((row) => row.id);
      assert.ok(page.items.length <= limit);
      seen.push(...page.items);
      if (!page.hasMore) {
        assert.equal(page.nextCursor, null);
        return seen;
      }
      assert.equal(page.items.length, limit, 'a page before the last is full');
      cursor = page.nextCursor;
    }
    throw new Error('paging did not end');
  }

  it('walks every visible row exactly once, newest first, with ties broken by id', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.record({ id: fc.stringMatching(/^[a-z]{1,6}$/), at: fc.integer({ min: 0, max: 5 }) }), {
          selector: (row) => row.id,
          maxLength: 25,
        }),
        fc.integer({ min: 1, max: 7 }),
        async (rows, limit) => {
          const base = Date.UTC(2030, 0, 1);
          await load([
            ...rows.map((row) => ({ id: row.id, at: new Date(base + row.at * 1000) })),
            { id: 'hidden', at: new Date(base), kind: 'hidden' },
          ]);
          const expected = [...rows]
            .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
            .map((row) => row.id);
          assert.deepEqual(await walk(limit), expected);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('pages updated_after in ascending order from the given instant on', async () => {
    const base = Date.UTC(2030, 0, 1);
    await load(Array.from({ length: 9 }, (_, i) => ({ id: `r${i}`, at: new Date(base + i * 1000) })));
    assert.deepEqual(await walk(2, new Date(base + 4000)), ['r4', 'r5', 'r6', 'r7', 'r8']);
  });

  it('reports no more pages when the last page is exactly full', async () => {
    await load([1, 2, 3].map((i) => ({ id: `r${i}`, at: new Date(Date.UTC(2030, 0, i)) })));
    const page = await pager.page(LIST, SHOWN, { limit: 3, cursor: null, updatedAfter: null });
    assert.equal(page.hasMore, false);
    assert.equal(page.nextCursor, null);
  });

  it('refuses a cursor whose anchor row is gone, one of another ordering, and a tampered one', async () => {
    await load([1, 2, 3].map((i) => ({ id: `r${i}`, at: new Date(Date.UTC(2030, 0, i)) })));
    const first = await pager.page(LIST, SHOWN, { limit: 1, cursor: null, updatedAfter: null });
    const cursor = first.nextCursor;
    assert.ok(cursor !== null);
    const codeOf = async (request: { cursor: string; updatedAfter: Date | null }): Promise<string> => {
      try {
        await pager.page(LIST, SHOWN, { limit: 1, ...request });
        return 'accepted';
      } catch (error) {
        return error instanceof DomainError ? error.code : String(error);
      }
    };
    assert.equal(await codeOf({ cursor: `${cursor}x`, updatedAfter: null }), 'invalid_cursor');
    assert.equal(await codeOf({ cursor, updatedAfter: new Date(0) }), 'invalid_cursor');
    await db.query(`DELETE FROM pager_probe WHERE id = 'r3'`);
    assert.equal(await codeOf({ cursor, updatedAfter: null }), 'invalid_cursor');
  });

  it('pages on from a cursor signed for no list, as earlier builds made them, so paging goes on across an upgrade', async () => {
    await load([1, 2, 3].map((i) => ({ id: `r${i}`, at: new Date(Date.UTC(2030, 0, i)) })));
    const made = await pager.page(LIST, SHOWN, { limit: 1, cursor: null, updatedAfter: null });
    assert.ok(made.nextCursor !== null);
    const position = new CursorCodec(Buffer.from(signingKey, 'hex')).decode(made.nextCursor, JSON.stringify(SHOWN));
    assert.ok(position !== null, 'a cursor made now is signed for its list');
    const unlisted = new CursorCodec(Buffer.from(signingKey, 'hex')).encode(position);
    const next = await pager.page(LIST, SHOWN, { limit: 5, cursor: unlisted, updatedAfter: null });
    assert.deepEqual(
      next.items.map((row) => row.id),
      ['r2', 'r1'],
    );
  });

  it('sends every page as a named prepared statement, so PostgreSQL plans each list statement once per connection', async () => {
    await load([1, 2, 3].map((i) => ({ id: `r${i}`, at: new Date(Date.UTC(2030, 0, i)) })));
    const list = LIST;
    const firstPage = { limit: 1, cursor: null, updatedAfter: null };
    const prepared = async (): Promise<string[]> =>
      (
        await db.query<Array<{ name: string }>>(
          `SELECT name FROM pg_prepared_statements WHERE statement LIKE '%pager_probe%'`,
        )
      ).map((row) => row.name);
    const first = await pager.page(list, SHOWN, firstPage);
    await pager.page(list, SHOWN, { ...firstPage, cursor: first.nextCursor });
    const after = await prepared();
    assert.ok(after.includes(list.first.default.statement.name ?? ''), 'the first page statement is prepared');
    assert.ok(after.includes(list.afterCursor.default.statement.name ?? ''), 'the cursor page statement is prepared');
    await pager.page(list, SHOWN, firstPage);
    assert.equal((await prepared()).length, after.length, 'a repeated page reuses its prepared statement');
  });

  it('refuses a list parameter left out instead of sending a wrong statement', async () => {
    await assert.rejects(
      pager.page(LIST, {} as typeof SHOWN, { limit: 1, cursor: null, updatedAfter: null }),
      /SQL parameter "kind" was not given/,
    );
  });

  it('refuses a list whose own parameter takes a name the pager appends', () => {
    assert.throws(
      () =>
        defineKeysetList<{ pageLimit: number }, ProbeRow>({
          select: PROBE_VIEW.select,
          from: 'pager_probe p',
          idColumn: 'p.id',
          where: (p) => [sql`p.n < ${p.pageLimit}`],
          anchorTable: 'pager_probe',
          orderings: { default: LIST_ORDERING, updatedAfter: LIST_ORDERING },
          prepared: false,
        }),
      /pageLimit has the name of one the pager appends/,
    );
  });

  it('compiles each list once: the same statement text serves every page request', () => {
    assert.match(LIST.afterCursor.updatedAfter.statement.text, /p\.kind = \$\d+ AND p\.at >= \$\d+::timestamptz/);
    assert.deepEqual([...LIST.afterCursor.updatedAfter.statement.parameterNames].sort(), [
      'kind',
      'pageAfterId',
      'pageLimit',
      'pagePosition',
      'pageUpdatedAfter',
    ]);
  });
});
