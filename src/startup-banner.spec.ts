import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startupBanner, type StartupFacts } from './startup-banner';

const EMBEDDED: StartupFacts = {
  publicUrl: 'http://127.0.0.1:3000',
  adminUrl: 'http://127.0.0.1:3001',
  embeddedDataDir: '.data',
  generatedAdminToken: null,
  adminTokenFromSetting: false,
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
});
