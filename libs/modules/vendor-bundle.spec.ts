import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bundleMatches } from './vendor-bundle';

const projectRoot = join(__dirname, '..', '..', '..');

/** A fresh process that installs the bundle as main.ts does, requires `library`, and says where it came from. */
function loadIn(library: string): { fromNodeModules: boolean; used: boolean; cache: string } {
  const script = `
    require(${JSON.stringify(join(__dirname, 'use-vendor-bundle.js'))});
    require(${JSON.stringify(library)});
    const bundle = require(${JSON.stringify(join(__dirname, 'vendor-bundle.js'))});
    const fromNodeModules = Object.keys(require.cache).some((file) => file.includes('/node_modules/${library}/'));
    const state = bundle.vendorBundleState();
    bundle.saveVendorCodeCache();
    process.stdout.write(JSON.stringify({ fromNodeModules, ...state }));`;
  return JSON.parse(
    execFileSync(process.execPath, ['--no-warnings', '-e', script], { cwd: projectRoot, encoding: 'utf8' }),
  ) as {
    fromNodeModules: boolean;
    used: boolean;
    cache: string;
  };
}

describe('the vendor bundle (libraries from one file, compiled from V8’s code cache)', () => {
  it('is used only when built from this package-lock.json: another lock leaves every library to node_modules', () => {
    const lock = Buffer.from('{"lockfileVersion":3}');
    const manifest = { lock: createHash('sha256').update(lock).digest('hex'), names: ['typeorm'] };
    assert.equal(bundleMatches(manifest, lock), true);
    assert.equal(bundleMatches(manifest, Buffer.from('{"lockfileVersion":3,"packages":{}}')), false);
  });

  it('serves a library the service imports from the bundle, not node_modules, and a later process compiles it from the code cache', () => {
    const first = loadIn('typeorm');
    assert.equal(first.used, true);
    assert.equal(first.fromNodeModules, false, 'typeorm came from the bundle');
    assert.equal(loadIn('typeorm').cache, 'accepted');
  });
});
