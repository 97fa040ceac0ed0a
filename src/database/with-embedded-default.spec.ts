import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadAppConfig } from '../config/app-config';
import { withEmbeddedDefault } from './with-embedded-default';

describe('withEmbeddedDefault', () => {
  it('refuses, for a command that needs an existing database, a folder without one instead of making a new, empty one', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'events-api-no-data-'));
    try {
      const config = { ...loadAppConfig({}), dataDir: join(folder, '.data') };
      await assert.rejects(
        withEmbeddedDefault(config, () => undefined, { existingOnly: true }),
        (error: Error) =>
          error instanceof ConfigError && /no embedded database in .*set DATABASE_URL/.test(error.message),
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
