/**
 * `npm test`'s type-check, compile, ESLint and tests, with one TypeScript
 * program for the first three: ESLint's type-aware rules read the types tsc
 * has just checked, instead of building and checking the whole program a
 * second time beside the compile (on 2 cores, as much CPU again as the
 * compile took). Once dist/ is written the tests start in a child process
 * (test/support/run-tests.ts), and ESLint runs meanwhile at a lower CPU
 * priority. As `tsc -p tsconfig.json`, a type error stops the run before the
 * tests; the exit code is non-zero when the type-check, ESLint or a test fails.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { bundleVendor } from './bundle-vendor.mjs';
import { pruneDist } from './prune-dist.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** Type-checks and emits as `tsc -p tsconfig.json` does (incremental); returns the program, or null on an error. */
function compile() {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (config === undefined) throw new Error('tsconfig.json could not be read');
  const builder = ts.createIncrementalProgram({
    rootNames: config.fileNames,
    options: config.options,
    projectReferences: config.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
  const diagnostics = [
    ...builder.getConfigFileParsingDiagnostics(),
    ...builder.getOptionsDiagnostics(),
    ...builder.getGlobalDiagnostics(),
    ...builder.getSyntacticDiagnostics(),
    ...builder.getSemanticDiagnostics(),
    ...builder.emit().diagnostics,
  ];
  const host = { getCurrentDirectory: () => root, getCanonicalFileName: (name) => name, getNewLine: () => '\n' };
  const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  if (diagnostics.length > 0) process.stdout.write(format(diagnostics, host));
  return diagnostics.some((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error)
    ? null
    : builder.getProgram();
}

/** ESLint on the whole tree as `eslint .` runs it, its type-aware rules on the compiled program. */
async function lint(program) {
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parserOptions: { programs: [program], projectService: false } } },
    ],
  });
  const results = await eslint.lintFiles(['.']);
  const output = (await eslint.loadFormatter('stylish')).format(results);
  if (output !== '') process.stdout.write(output);
  return results.every((result) => result.errorCount === 0 && result.fatalErrorCount === 0);
}

function runTests() {
  const child = spawn(process.execPath, [join(root, 'dist', 'test', 'support', 'run-tests.js')], { stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code === 0)));
}

/** Where the run's time goes: each step's seconds since the start, on stderr beside the runner's own figures. */
const started = performance.now();
const say = (message) =>
  process.stderr.write(`[compile-lint] ${message} at ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

const program = compile();
if (program === null) {
  process.stderr.write('type errors: the tests did not run\n');
  process.exit(2);
}
pruneDist(root);
await bundleVendor(root);
say('type-checked, compiled and bundled; tests started');
const tests = runTests();
// Only this process's main thread, where ESLint runs; the tests started above keep their priority.
setPriority(10);
const linted = await lint(program);
say(linted ? 'ESLint found no errors' : 'ESLint found errors');
const passed = await tests;
process.exit(linted && passed ? 0 : 1);
