import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname, join, sep } from 'node:path';
import { Script } from 'node:vm';

/**
 * Serves the libraries the service imports from dist/vendor/vendor.js, the
 * bundle tools/bundle-vendor.mjs builds with the service: one file to read
 * and, from the second start on, compiled from V8's code cache, instead of
 * some 1,500 files resolved and compiled one by one (about a second of CPU
 * per start on this project's machine; docs/performance.md).
 *
 * It serves a `require` of a name the manifest lists only when the request
 * resolves to the very file the bundle was built from (a nested copy of
 * another version is loaded as before), and only when the manifest was
 * built from the package-lock.json beside it. A bundle that is missing,
 * built for other packages, or not the file its manifest describes (a
 * build under way, a partial copy) leaves every library to node_modules.
 * The bundle is read at the first such `require`, so a process that stops
 * before loading the application (a refused setting) never reads it.
 *
 * Node's CommonJS loader offers no public hook for this; `Module._load` is
 * the one module-alias and v8-compile-cache use.
 */

export interface VendorManifest {
  lock: string;
  /** Each served name and the file (relative to the project) it was bundled from. */
  names: Record<string, string>;
  /** sha256 of vendor.js. */
  bundle: string;
}

type LoadFunction = (request: string, parent: unknown, isMain: boolean) => unknown;
const moduleInternals = Module as unknown as {
  _load: LoadFunction;
  _resolveFilename(request: string, parent: unknown, isMain: boolean): string;
  wrap(source: string): string;
};

export type CodeCacheState = 'none' | 'accepted' | 'rejected';

/** The project root: this file is dist/libs/modules/vendor-bundle.js once compiled. */
const PROJECT_ROOT = join(__dirname, '..', '..', '..');
const BUNDLE_FOLDER = join(PROJECT_ROOT, 'dist', 'vendor');

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

interface LoadedBundle {
  exports: Record<string, () => unknown>;
  script: Script;
  cacheFile: string;
  cache: CodeCacheState;
}

let loaded: LoadedBundle | null = null;
let installed = false;

/** Whether a manifest was built from this package-lock.json: the libraries in node_modules are the bundle's. */
export function bundleMatches(manifest: Pick<VendorManifest, 'lock'>, packageLock: Buffer): boolean {
  return sha256(packageLock) === manifest.lock;
}

function readManifest(folder: string): VendorManifest | null {
  try {
    const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8')) as VendorManifest;
    return bundleMatches(manifest, readFileSync(join(PROJECT_ROOT, 'package-lock.json'))) ? manifest : null;
  } catch {
    return null;
  }
}

/** The package a request names (`@scope/name` or `name`). */
function packageOf(request: string): string {
  return request
    .split('/')
    .slice(0, request.startsWith('@') ? 2 : 1)
    .join('/');
}

/**
 * V8's code cache belongs to one script and one set of V8 flags; V8 itself
 * checks the source's length only, so the bundle's hash is in the name.
 */
function cacheFileName(folder: string, manifest: VendorManifest): string {
  const flags = sha256(Buffer.from(`${process.version}\0${process.execArgv.join('\0')}`)).slice(0, 16);
  return join(folder, `vendor.${manifest.bundle.slice(0, 16)}.${flags}.cache`);
}

/** The bundle as its manifest describes it, or null (missing, or another file: a build under way). */
function loadBundle(folder: string, manifest: VendorManifest): LoadedBundle | null {
  const file = join(folder, 'vendor.js');
  let source: Buffer;
  try {
    source = readFileSync(file);
  } catch {
    return null;
  }
  if (sha256(source) !== manifest.bundle) return null;
  const cacheFile = cacheFileName(folder, manifest);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // The bundle has no import(): the build turned each into a require of its own.
  const script = new Script(moduleInternals.wrap(source.toString('utf8')), { filename: file, cachedData });
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

/**
 * Installs the bundle's `require` of the names it serves, when it matches
 * node_modules; once per process. `folder` is dist/vendor but in tests.
 */
export function useVendorBundle(folder: string = BUNDLE_FOLDER): void {
  if (installed) return;
  installed = true;
  const manifest = readManifest(folder);
  if (manifest === null) return;
  const bundled = new Map(Object.entries(manifest.names).map(([name, file]) => [name, join(PROJECT_ROOT, file)]));
  const packages = new Set([...bundled.keys()].map(packageOf));
  const served = new Map<string, unknown>();
  // Node resolves a library to its real path: where node_modules, or a package in it, is a symbolic link
  // (a workspace, a shared install), a bundled file is recognised by its real path too. Looked up only then.
  const realPaths = new Map<string, string>();
  const real = (path: string): string => {
    let found = realPaths.get(path);
    if (found === undefined) {
      try {
        found = realpathSync(path);
      } catch {
        found = path;
      }
      realPaths.set(path, found);
    }
    return found;
  };
  const load = moduleInternals._load;
  let unusable = false;
  moduleInternals._load = function vendorLoad(this: unknown, request: string, parent: unknown, isMain: boolean) {
    if (unusable || !packages.has(packageOf(request))) return load.call(this, request, parent, isMain);
    const file = bundled.get(request);
    let resolved: string;
    try {
      resolved = moduleInternals._resolveFilename(request, parent, isMain);
    } catch {
      return load.call(this, request, parent, isMain);
    }
    if (file === undefined) {
      // A file of a bundled package the bundle does not hold would be a second copy of that library beside the
      // bundle's: a bundle older than the code (a compile without the build). A nested copy is another library.
      const packageFolder = join(PROJECT_ROOT, 'node_modules', packageOf(request));
      if (resolved.startsWith(packageFolder + sep) || resolved.startsWith(real(packageFolder) + sep)) {
        throw new Error(
          `${request} is not in the libraries' bundle, which is older than the code: run npm run build (or npm run compile)`,
        );
      }
      return load.call(this, request, parent, isMain);
    }
    if (resolved !== file && resolved !== real(file)) return load.call(this, request, parent, isMain);
    if (served.has(request)) return served.get(request);
    loaded ??= loadBundle(folder, manifest);
    if (loaded === null) {
      // Nothing was served yet (the bundle is read at the first request): node_modules serves every library.
      unusable = true;
      return load.call(this, request, parent, isMain);
    }
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
  const partial = `${loaded.cacheFile}.${randomBytes(6).toString('hex')}`;
  try {
    writeFileSync(partial, loaded.script.createCachedData());
    renameSync(partial, loaded.cacheFile);
  } catch {
    // The next start compiles the bundle again: slower, nothing else.
    rmSync(partial, { force: true });
  }
}
