import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

/** ormconfig.ts: the data source `npm run migration:run` and `migration:revert` give the TypeORM CLI. */
describe('the TypeORM CLI’s data source', () => {
  it('refuses without DATABASE_URL, saying where the embedded default keeps it', async () => {
    const env = { ...process.env };
    delete env['DATABASE_URL'];
    const loaded = promisify(execFile)(
      process.execPath,
      ['-e', `require(${JSON.stringify(resolve(__dirname, '..', 'ormconfig.js'))})`],
      { env },
    );
    await assert.rejects(loaded, (error: { stderr: string }) => {
      assert.match(
        error.stderr,
        /Set DATABASE_URL to run TypeORM CLI commands: .*DATABASE_URL=\$\(cat \.data\/pg-url\) npm run migration:run/,
      );
      return true;
    });
  });
});
