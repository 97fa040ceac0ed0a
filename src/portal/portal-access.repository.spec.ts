import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../test/support/eventually';
import { repositoryDatabase, type RepositoryDatabase } from '../../test/support/repository-database';
import { PortalAccessRepository } from './portal-access.repository';

const account = { type: 'organiser', id: 'org_revoked' } as const;

/** The revocation's rules of PortalAccessRepository, on real PostgreSQL. */
describe('PortalAccessRepository', () => {
  let db: RepositoryDatabase;
  let access: PortalAccessRepository;

  before(async () => {
    db = await repositoryDatabase();
    access = new PortalAccessRepository(db.database);
  });
  after(async () => db.close());

  it('a revocation ends the session of a link opened at the same moment: the opening commits first and its session is ended, or the link is refused', async () => {
    await access.insertLink({ tokenHash: 'link-racing-revoke', account, readOnly: false, ttlSeconds: 600 });
    // The opening has claimed the link and made its session, not yet committed, when the revocation comes.
    let commitOpening!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commitOpening = resolve));
    let sessionMade!: () => void;
    const made = new Promise<void>((resolve) => (sessionMade = resolve));
    const opening = db.unitOfWork.run(async (tx) => {
      assert.notEqual(await access.openLink('link-racing-revoke', tx), null);
      await access.insertSession(
        { id: 'session-racing', tokenHash: 'session-racing-revoke', account, readOnly: false, csrfToken: 'x' },
        tx,
      );
      sessionMade();
      await mayCommit;
    });
    await made;
    const revoking = db.unitOfWork.run((tx) => access.revokeAccount(account, tx));
    // The revocation waits on the link the opening holds.
    await eventually(
      async () => ((await waitingOnALock()) > 0 ? true : undefined),
      'the revocation to wait for the opening',
    );
    commitOpening();
    await opening;
    assert.deepEqual(await revoking, { sessions: 1, links: 0 });
    const touched = await access.touchSession('session-racing-revoke', { idleSeconds: 600, absoluteSeconds: 600 });
    assert.equal(touched, null, 'the session opened beside the revocation is ended');
  });

  async function waitingOnALock(): Promise<number> {
    const rows = await db.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]?.n ?? 0;
  }
});
