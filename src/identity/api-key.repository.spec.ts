import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { ApiKeyEntity } from './entities/api-key.entity';
import { ApiKeyRepository } from './api-key.repository';

/** Every statement of ApiKeyRepository, on real PostgreSQL. */
describe('ApiKeyRepository', () => {
  let db: RepositoryDatabase;
  let keys: ApiKeyRepository;

  before(async () => {
    db = await repositoryDatabase();
    keys = new ApiKeyRepository(db.dataSource.getRepository(ApiKeyEntity), db.database);
  });
  after(async () => db.close());

  async function mint(id: string, principalId: string, principalType: 'organiser' | 'venue' = 'organiser') {
    await keys.insert({
      id,
      keyHash: `hash_${id}`,
      keyPrefix: `svc_live_${id}`,
      principalType,
      principalId,
      scopes: ['events:read'],
      name: null,
      createdByRole: 'owner',
    });
  }

  it('finds an active key by its hash as the authentication view, and not once it is revoked', async () => {
    await mint('key_a', 'org_a');
    assert.deepEqual(await keys.findActiveByHash('hash_key_a'), {
      id: 'key_a',
      principalType: 'organiser',
      principalId: 'org_a',
      scopes: ['events:read'],
      keyPrefix: 'svc_live_key_a',
    });
    assert.equal(await keys.revoke('key_a'), 'hash_key_a');
    assert.equal(await keys.findActiveByHash('hash_key_a'), null);
  });

  it('revokes a key once: a second revocation, or an unknown id, returns no hash', async () => {
    await mint('key_b', 'org_a');
    assert.equal(await keys.revoke('key_b'), 'hash_key_b');
    assert.equal(await keys.revoke('key_b'), null);
    assert.equal(await keys.revoke('key_missing'), null);
    assert.equal(await keys.exists('key_b'), true);
    assert.equal(await keys.exists('key_missing'), false);
  });

  it("lists one principal's keys oldest first, never another principal's, as the list view with ISO times", async () => {
    await mint('key_c1', 'org_c');
    await mint('key_other', 'org_other');
    await mint('key_venue', 'org_c', 'venue');
    await mint('key_c2', 'org_c');
    const listed = await keys.list({ type: 'organiser', id: 'org_c' });
    assert.deepEqual(
      listed.map((key) => key.id),
      ['key_c1', 'key_c2'],
    );
    const [first] = listed;
    assert.ok(first !== undefined);
    assert.match(first.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(first.revokedAt, null);
    assert.equal(first.lastUsedAt, null);
    assert.ok(!('keyHash' in first), 'the hash never leaves the repository');
    assert.ok(
      (await keys.list()).some((key) => key.id === 'key_other'),
      'without a principal, every key',
    );
  });

  it('records last-used times in one batch, never moving one backwards', async () => {
    await mint('key_d', 'org_d');
    await mint('key_e', 'org_d');
    const late = new Date('2030-01-02T00:00:00.000Z');
    const early = new Date('2030-01-01T00:00:00.000Z');
    await keys.recordLastUsed(new Map([['key_d', late]]));
    await keys.recordLastUsed(
      new Map([
        ['key_d', early],
        ['key_e', early],
      ]),
    );
    const listed = await keys.list({ type: 'organiser', id: 'org_d' });
    assert.deepEqual(
      listed.map((key) => [key.id, key.lastUsedAt]),
      [
        ['key_d', late.toISOString()],
        ['key_e', early.toISOString()],
      ],
    );
  });
});
