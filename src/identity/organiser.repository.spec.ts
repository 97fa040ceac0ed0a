import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { OrganiserRepository } from './organiser.repository';

/** Every statement of OrganiserRepository, on real PostgreSQL. */
describe('OrganiserRepository', () => {
  let db: RepositoryDatabase;
  let organisers: OrganiserRepository;

  before(async () => {
    db = await repositoryDatabase();
    organisers = new OrganiserRepository(db.dataSource, db.database, db.pager);
    for (const [id, name] of [
      ['org_1', 'Alpha Hall'],
      ['org_2', '100% Jazz'],
      ['org_3', 'Beta_Club'],
    ] as const) {
      await organisers.insert({ id, name, placeholder: id === 'org_3' });
    }
  });
  after(async () => db.close());

  it('returns the organiser it inserts as stored', async () => {
    assert.deepEqual(await organisers.insert({ id: 'org_4', name: 'Delta', placeholder: false }), {
      id: 'org_4',
      name: 'Delta',
      placeholder: false,
    });
  });

  it('finds an organiser as its view, and tells existence, also inside a transaction', async () => {
    assert.deepEqual(await organisers.find('org_3'), { id: 'org_3', name: 'Beta_Club', placeholder: true });
    assert.equal(await organisers.find('org_missing'), null);
    assert.equal(await organisers.exists('org_1'), true);
    assert.equal(await organisers.exists('org_missing'), false);
    assert.equal(await db.unitOfWork.run((tx) => organisers.exists('org_2', tx)), true);
  });

  it('lists every organiser oldest first', async () => {
    assert.deepEqual(
      (await organisers.list()).map((organiser) => organiser.id),
      ['org_1', 'org_2', 'org_3', 'org_4'],
    );
  });

  it('pages newest first through every organiser, and a search matches the id or a literal part of the name', async () => {
    const first = await organisers.page({ limit: 3, cursor: null, updatedAfter: null }, null);
    assert.deepEqual(
      first.items.map((organiser) => organiser.id),
      ['org_4', 'org_3', 'org_2'],
    );
    assert.match(first.items[0]?.createdAt ?? '', /Z$/);
    const second = await organisers.page({ limit: 3, cursor: first.nextCursor, updatedAfter: null }, null);
    assert.deepEqual(
      second.items.map((organiser) => organiser.id),
      ['org_1'],
    );
    assert.equal(second.hasMore, false);
    const search = async (term: string): Promise<string[]> =>
      (await organisers.page({ limit: 10, cursor: null, updatedAfter: null }, term)).items.map((o) => o.id);
    assert.deepEqual(await search('org_1'), ['org_1']);
    assert.deepEqual(await search('%'), ['org_2'], '% is a literal, not a wildcard');
    assert.deepEqual(await search('_'), ['org_3'], '_ is a literal, not a wildcard');
    assert.deepEqual(await search(''), ['org_4', 'org_3', 'org_2', 'org_1']);
  });
});
