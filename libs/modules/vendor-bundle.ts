import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname, join } from 'node:path';
import { Script, constants } from 'node:vm';

/**
 * Serves the libraries the service imports from dist/vendor/vendor.js, the
 * bundle tools/bundle-vendor.mjs builds with the service: one file to read
 * and, from the second start on, compiled from V8's code cache, instead of
 * some 1,500 files resolved and compiled one by one (about a second of CPU
 * per start on this project's machine; docs/performance.md).
 *
 * It takes over `require` of exactly the names the bundle's manifest lists,
 * and only when the manifest was built from the package-lock.json beside
 * it: a bundle missing, or built for other packages (an `npm ci` without a
 * build), leaves every library to load from node_modules as before. The
 * bundle is read at the first such `require`, so a process that stops
 * before loading the application (a refused setting) never reads it.
 *
 * Node's CommonJS loader offers no public hook for this; `Module._load` is
 * the one module-alias and v8-compile-cache use.
 */

interface Manifest {
  lock: string;
  names: string[];
}

type LoadFunction = (request: string, parent: unknown, isMain: boolean) => unknown;
const moduleInternals = Module as unknown as { _load: LoadFunction; wrap(source: string): string };

export type CodeCacheState = 'none' | 'accepted' | 'rejected';

/** The project root: this file is dist/libs/modules/vendor-bundle.js once compiled. */
const PROJECT_ROOT = join(__dirname, '..', '..', '..');
const BUNDLE_FOLDER = join(PROJECT_ROOT, 'dist', 'vendor');

interface LoadedBundle {
  exports: Record<string, () => unknown>;
  script: Script;
  cacheFile: string;
  cache: CodeCacheState;
}

let loaded: LoadedBundle | null = null;
let installed = false;

/** Whether a manifest was built from this package-lock.json: the libraries in node_modules are the bundle's. */
export function bundleMatches(manifest: Manifest, packageLock: Buffer): boolean {
  return createHash('sha256').update(packageLock).digest('hex') === manifest.lock;
}

function readManifest(): Manifest | null {
  try {
    const manifest = JSON.parse(readFileSync(join(BUNDLE_FOLDER, 'manifest.json'), 'utf8')) as Manifest;
    return bundleMatches(manifest, readFileSync(join(PROJECT_ROOT, 'package-lock.json'))) ? manifest : null;
  } catch {
    return null;
  }
}

/** The code cache is V8's and its flags': one file per Node version and command-line flags. */
function cacheFileName(): string {
  const key = createHash('sha256')
    .update(`${process.version}\0${process.execArgv.join('\0')}`)
    .digest('hex')
    .slice(0, 16);
  return join(BUNDLE_FOLDER, `vendor.${key}.cache`);
}

function loadBundle(): LoadedBundle {
  const file = join(BUNDLE_FOLDER, 'vendor.js');
  const cacheFile = cacheFileName();
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(moduleInternals.wrap(readFileSync(file, 'utf8')), {
    filename: file,
    cachedData,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const bundle = new Module(file);
  bundle.filename = file;
  bundle.paths = [join(PROJECT_ROOT, 'node_modules')];
  const bundleRequire = Object.assign((id: string): unknown => bundle.require(id), {
    resolve: (id: string) => require.resolve(id, { paths: [dirname(file)] }),
  });
  (script.runInThisContext() as (...args: unknown[]) => void).call(
    bundle.exports,
    bundle.exports,
    bundleRequire,
    bundle,
    file,
    dirname(file),
  );
  const cache: CodeCacheState =
    cachedData === undefined ? 'none' : script.cachedDataRejected === true ? 'rejected' : 'accepted';
  return { exports: bundle.exports as Record<string, () => unknown>, script, cacheFile, cache };
}

/** Installs the bundle's `require` of the names it serves, when it matches node_modules; once per process. */
export function useVendorBundle(): void {
  if (installed) return;
  installed = true;
  const manifest = readManifest();
  if (manifest === null) return;
  const names = new Set(manifest.names);
  const served = new Map<string, unknown>();
  const load = moduleInternals._load;
  moduleInternals._load = function vendorLoad(this: unknown, request: string, parent: unknown, isMain: boolean) {
    if (!names.has(request)) return load.call(this, request, parent, isMain);
    if (served.has(request)) return served.get(request);
    loaded ??= loadBundle();
    const value = loaded.exports[request]!();
    served.set(request, value);
    return value;
  };
}

/** Whether this process serves libraries from the bundle, and how its code cache was found. */
export function vendorBundleState(): { used: boolean; cache: CodeCacheState } {
  return { used: loaded !== null, cache: loaded?.cache ?? 'none' };
}

/**
 * Writes V8's code cache of the bundle as this process has compiled it
 * (the application started: what a start runs is in it), unless a cache
 * was accepted already. Best effort: a read-only dist/ only loses the cache.
 */
export function saveVendorCodeCache(): void {
  if (loaded === null || loaded.cache === 'accepted') return;
  try {
    const partial = `${loaded.cacheFile}.${process.pid}`;
    writeFileSync(partial, loaded.script.createCachedData());
    renameSync(partial, loaded.cacheFile);
  } catch {
    // The next start compiles the bundle again: slower, nothing else.
  }
}
