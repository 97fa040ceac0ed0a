import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startupBanner, type StartupFacts } from './startup-banner';

const EMBEDDED: StartupFacts = {
  publicUrl: 'http://127.0.0.1:3000',
  adminUrl: 'http://127.0.0.1:3001',
  embeddedDataDir: '.data',
  generatedAdminToken: null,
  adminTokenFromSetting: false,
  instance: { id: '0b7e4c9a-3f51-4d2e-9c1a-6f0e8d2b5a47', pid: 4242, host: 'laptop' },
  demo: null,
  readyInMs: 1,
};

const tokenLine = (facts: StartupFacts): string | undefined =>
  startupBanner(facts).find((line) => line.startsWith('Admin token'));

describe('the start-up banner', () => {
  it('names where the admin token is: shown once when generated, then its file, or ADMIN_TOKEN when that is set', () => {
    assert.match(tokenLine({ ...EMBEDDED, generatedAdminToken: 'a'.repeat(48) }) ?? '', /a{48} +\(generated now/);
    assert.equal(tokenLine(EMBEDDED), 'Admin token   kept in .data/admin-token');
    assert.equal(
      tokenLine({ ...EMBEDDED, adminTokenFromSetting: true }),
      'Admin token   from ADMIN_TOKEN (not .data/admin-token)',
    );
  });

  it('names this instance as GET /internal/instances lists it, with its process id and host', () => {
    assert.ok(
      startupBanner(EMBEDDED).includes('Instance      0b7e4c9a-3f51-4d2e-9c1a-6f0e8d2b5a47   (pid 4242 on laptop)'),
      startupBanner(EMBEDDED).join('\n'),
    );
  });
});
