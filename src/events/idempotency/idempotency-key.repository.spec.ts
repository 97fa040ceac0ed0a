import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../../test/support/repository-database';
import { OrganiserRepository } from '../../identity/organiser.repository';
import { IdempotencyKeyRepository } from './idempotency-key.repository';

/** Every statement of IdempotencyKeyRepository, on real PostgreSQL. */
describe('IdempotencyKeyRepository', () => {
  let db: RepositoryDatabase;
  let keys: IdempotencyKeyRepository;
  const mine = { organizerId: 'org_a', key: 'k1' };
  const theirs = { organizerId: 'org_b', key: 'k1' };
  const response = { status: 201, headers: JSON.stringify({ etag: '"x"' }), body: JSON.stringify({ id: 'evt_1' }) };

  before(async () => {
    db = await repositoryDatabase();
    keys = new IdempotencyKeyRepository(db.database);
    const organisers = new OrganiserRepository(db.dataSource, db.database, db.pager);
    await organisers.insert({ id: 'org_a', name: 'A', placeholder: false });
    await organisers.insert({ id: 'org_b', name: 'B', placeholder: false });
  });
  after(async () => db.close());

  const createdDaysAgo = (days: number, key: { organizerId: string; key: string }) =>
    db.dataSource.query(
      `UPDATE idempotency_key SET created_at = now() - make_interval(days => $3) WHERE organizer_id = $1 AND key = $2`,
      [key.organizerId, key.key, days],
    );

  it('claims a key once per organiser; a claim that rolled back leaves it free', async () => {
    await assert.rejects(
      db.unitOfWork.run(async (tx) => {
        assert.equal(await keys.claim(mine, 'fp', tx), true);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    await db.unitOfWork.run(async (tx) => {
      await keys.limitLockWait(tx);
      assert.equal(await keys.claim(mine, 'fp', tx), true);
      await keys.store(mine, response, tx);
    });
    await db.unitOfWork.run(async (tx) => {
      assert.equal(await keys.claim(mine, 'fp', tx), false);
      assert.equal(await keys.claim(theirs, 'fp', tx), true, 'the same key of another organiser is another key');
    });
  });

  it("replays the stored response of the organiser's own key only", async () => {
    const stored = await db.unitOfWork.run((tx) => keys.find(mine, tx));
    assert.deepEqual(stored, {
      state: 'succeeded',
      requestFingerprint: 'fp',
      responseStatus: 201,
      responseHeaders: { etag: '"x"' },
      responseBody: JSON.stringify({ id: 'evt_1' }),
    });
    assert.equal((await db.unitOfWork.run((tx) => keys.find(theirs, tx)))?.state, 'pending');
    assert.equal(await db.unitOfWork.run((tx) => keys.find({ organizerId: 'org_a', key: 'nope' }, tx)), null);
  });

  it('expires a key only once it is older than 7 days, and purges every such key', async () => {
    await db.unitOfWork.run((tx) => keys.expire(mine, tx));
    assert.notEqual(await db.unitOfWork.run((tx) => keys.find(mine, tx)), null, 'a fresh key stays');
    await createdDaysAgo(6, mine);
    await db.unitOfWork.run((tx) => keys.expire(mine, tx));
    assert.notEqual(await db.unitOfWork.run((tx) => keys.find(mine, tx)), null, 'a key made 6 days ago stays');
    await createdDaysAgo(6, theirs);
    assert.equal(await keys.purgeExpired(), 0, 'no key made 6 days ago is purged');
    await createdDaysAgo(8, mine);
    await db.unitOfWork.run((tx) => keys.expire(mine, tx));
    assert.equal(await db.unitOfWork.run((tx) => keys.find(mine, tx)), null, 'a key made 8 days ago expires');
    await createdDaysAgo(8, theirs);
    assert.equal(await keys.purgeExpired(), 1);
  });
});
