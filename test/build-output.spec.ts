import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const repository = resolve(__dirname, '..', '..');

interface PruneTool {
  pruneDist(root: string): string[];
}

async function pruneTool(): Promise<PruneTool> {
  return (await import(pathToFileURL(join(repository, 'tools', 'prune-dist.mjs')).href)) as PruneTool;
}

function touch(root: string, path: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), '');
}

describe('the build leaves no compiled file whose source is gone', () => {
  it('removes a compiled migration and its map once its source is deleted, and keeps every other', async () => {
    const root = mkdtempSync(join(tmpdir(), 'events-api-prune-'));
    try {
      touch(root, 'src/database/migrations/1-Kept.ts');
      touch(root, 'dist/src/database/migrations/1-Kept.js');
      touch(root, 'dist/src/database/migrations/1-Kept.js.map');
      touch(root, 'dist/src/database/migrations/2-Deleted.js');
      touch(root, 'dist/src/database/migrations/2-Deleted.js.map');
      touch(root, 'ormconfig.ts');
      touch(root, 'dist/ormconfig.js');
      touch(root, 'dist/.tsbuildinfo');
      touch(root, 'dist/vendor/vendor.js');

      const removed = (await pruneTool()).pruneDist(root);

      assert.deepEqual(removed.sort(), [
        'dist/src/database/migrations/2-Deleted.js',
        'dist/src/database/migrations/2-Deleted.js.map',
      ]);
      for (const kept of [
        'dist/src/database/migrations/1-Kept.js',
        'dist/ormconfig.js',
        'dist/.tsbuildinfo',
        'dist/vendor/vendor.js',
      ]) {
        assert.ok(existsSync(join(root, kept)), kept);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('runs after every compile: npm run build, npm run compile and npm test', () => {
    const scripts = (
      JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    assert.match(scripts['build'] ?? '', /&& node tools\/prune-dist\.mjs$/);
    assert.match(scripts['compile'] ?? '', /&& node tools\/prune-dist\.mjs$/);
    assert.match(readFileSync(join(repository, 'tools', 'compile-lint-test.mjs'), 'utf8'), /\npruneDist\(root\);\n/);
  });
});

describe('the libraries’ bundle is built only when what it is built from changed', () => {
  it('keeps dist/vendor, its code caches included, when the lock, the tool and the imports are unchanged', async () => {
    const { bundleVendor } = (await import(pathToFileURL(join(repository, 'tools', 'bundle-vendor.mjs')).href)) as {
      bundleVendor(this: void, root: string): Promise<string[]>;
    };
    await bundleVendor(repository);
    const marker = join(repository, 'dist', 'vendor', 'vendor.kept-by-the-build.cache');
    writeFileSync(marker, '');
    try {
      await bundleVendor(repository);
      assert.ok(existsSync(marker), 'an up-to-date bundle is not rebuilt');
    } finally {
      rmSync(marker, { force: true });
    }
  });
});
