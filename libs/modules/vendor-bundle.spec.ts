import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bundleMatches } from './vendor-bundle';

const projectRoot = join(__dirname, '..', '..', '..');
const builtFolder = join(projectRoot, 'dist', 'vendor');

interface Loaded {
  fromNodeModules: boolean;
  used: boolean;
  cache: string;
  refusal?: string;
  sameAsNested?: boolean;
}

/**
 * A fresh process that installs the bundle from `folder` as main.ts does,
 * runs `then` and says where typeorm came from (`then` may set `out.*`).
 */
function loadIn(folder: string, then = '', project = { root: projectRoot, loader: __dirname }): Loaded {
  const script = `
    const out = {};
    const bundle = require(${JSON.stringify(join(project.loader, 'vendor-bundle.js'))});
    bundle.useVendorBundle(${JSON.stringify(folder)});
    require('typeorm');
    ${then}
    out.fromNodeModules = Object.keys(require.cache).some((file) => file.includes('/node_modules/typeorm/'));
    Object.assign(out, bundle.vendorBundleState());
    bundle.saveVendorCodeCache();
    process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: project.root, encoding: 'utf8' })) as Loaded;
}

/** A copy of the built bundle's folder, its manifest changed by `edit`, and vendor.js by `bundle`. */
function copiedFolder(edit: (manifest: Record<string, unknown>) => void, bundle?: (source: string) => string): string {
  const folder = mkdtempSync(join(tmpdir(), 'vendor-bundle-'));
  folders.push(folder);
  const manifest = JSON.parse(readFileSync(join(builtFolder, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  edit(manifest);
  writeFileSync(join(folder, 'manifest.json'), JSON.stringify(manifest));
  if (bundle === undefined) copyFileSync(join(builtFolder, 'vendor.js'), join(folder, 'vendor.js'));
  else writeFileSync(join(folder, 'vendor.js'), bundle(readFileSync(join(builtFolder, 'vendor.js'), 'utf8')));
  return folder;
}

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('the vendor bundle (libraries from one file, compiled from V8’s code cache)', () => {
  it('compares a manifest’s package-lock hash with the lock in place', () => {
    const lock = Buffer.from('{"lockfileVersion":3}');
    const manifest = { lock: createHash('sha256').update(lock).digest('hex') };
    assert.equal(bundleMatches(manifest, lock), true);
    assert.equal(bundleMatches(manifest, Buffer.from('{"lockfileVersion":3,"packages":{}}')), false);
  });

  it('serves a library the service imports from the bundle, not node_modules, and a later process compiles it from the code cache', () => {
    const folder = copiedFolder(() => undefined);
    const first = loadIn(folder);
    assert.equal(first.used, true);
    assert.equal(first.fromNodeModules, false, 'typeorm came from the bundle');
    assert.equal(first.cache, 'none');
    assert.equal(loadIn(folder).cache, 'accepted');
  });

  it('leaves every library to node_modules when the bundle was built from another package-lock.json', () => {
    const loaded = loadIn(copiedFolder((manifest) => (manifest['lock'] = '0'.repeat(64))));
    assert.deepEqual([loaded.used, loaded.fromNodeModules], [false, true]);
  });

  it('leaves every library to node_modules, without failing, when vendor.js is not the file its manifest describes or is missing (a build under way)', () => {
    const other = loadIn(
      copiedFolder(
        () => undefined,
        (source) => `${source}\n// another build`,
      ),
    );
    assert.deepEqual([other.used, other.fromNodeModules], [false, true]);
    const missing = copiedFolder(() => undefined);
    rmSync(join(missing, 'vendor.js'));
    const none = loadIn(missing);
    assert.deepEqual([none.used, none.fromNodeModules], [false, true]);
  });

  it('serves a nested copy of another version as node_modules has it, never the bundle’s', () => {
    const loaded = loadIn(
      copiedFolder(() => undefined),
      `const nested = require('node:module').createRequire(require.resolve('@redocly/openapi-core'))('js-yaml');
       out.sameAsNested = nested === require('js-yaml');`,
    );
    assert.equal(loaded.sameAsNested, false);
  });

  it('refuses a file of a bundled library that the bundle does not hold, naming the build to run, instead of loading a second copy', () => {
    const loaded = loadIn(
      copiedFolder(() => undefined),
      `try { require('@nestjs/core/injector/modules-container'); } catch (error) { out.refusal = error.message; }`,
    );
    assert.match(loaded.refusal ?? '', /not in the libraries' bundle, which is older than the code: run npm run build/);
  });

  it('serves the bundle, and refuses a file it lacks, in a project whose node_modules is a symbolic link', () => {
    // A project of its own (the loader, the lock) whose node_modules links to this one's, as in a workspace.
    const root = mkdtempSync(join(tmpdir(), 'vendor-bundle-linked-'));
    folders.push(root);
    const loader = join(root, 'dist', 'libs', 'modules');
    mkdirSync(loader, { recursive: true });
    copyFileSync(join(__dirname, 'vendor-bundle.js'), join(loader, 'vendor-bundle.js'));
    copyFileSync(join(projectRoot, 'package-lock.json'), join(root, 'package-lock.json'));
    symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'));
    const loaded = loadIn(
      copiedFolder(() => undefined),
      `try { require('@nestjs/core/injector/modules-container'); } catch (error) { out.refusal = error.message; }`,
      { root, loader },
    );
    assert.deepEqual([loaded.used, loaded.fromNodeModules], [true, false]);
    assert.match(loaded.refusal ?? '', /not in the libraries' bundle/);
  });
});
