import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { OPS_COMMANDS } from '../src/ops/ops-commands';

// Compiled to dist/test/, so the repository is two folders up.
const ROOT = join(__dirname, '..', '..');
/** The README is read first by a newcomer: it stays a ten-minute read. */
const README_MAX_LINES = 250;

/** README.md and every guide in docs/, relative to the repository. */
function documents(): string[] {
  const guides = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...guides.sort()];
}

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The text outside fenced code blocks, line by line (a `[x](y)` or `# x` in code is not markdown). */
function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingSlugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** Targets of the inline links and images outside code, without absolute URLs (`https:`, `mailto:`). */
export function relativeLinks(markdown: string): string[] {
  return proseLines(markdown)
    .flatMap((line) => [...line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)])
    .map(([, target = '']) => target)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Each relative link of `path` that does not resolve to a file in the repository, or to a heading in it. */
export function brokenLinks(path: string, markdown: string, readFile: (path: string) => string = read): string[] {
  const broken: string[] = [];
  for (const link of relativeLinks(markdown)) {
    const [file = '', anchor] = link.split('#', 2);
    const target = file === '' ? path : relative(ROOT, resolve(ROOT, dirname(path), decodeURI(file)));
    if (file !== '' && (target.split(sep)[0] === '..' || !existsSync(join(ROOT, target)))) {
      broken.push(`${path}: ${link} (no file ${target} in the repository)`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!target.endsWith('.md') || (file !== '' && !statSync(join(ROOT, target)).isFile())) {
      broken.push(`${path}: ${link} (an anchor into ${target}, which is not a markdown file)`);
    } else if (!headingSlugs(target === path ? markdown : readFile(target)).has(anchor)) {
      broken.push(`${path}: ${link} (no heading #${anchor} in ${target})`);
    }
  }
  return broken;
}

/** Every `npm run <script>` and `npm run <script> -- <argument>` a text names, code blocks included. */
export function npmRuns(markdown: string): Array<{ script: string; argument: string | undefined }> {
  const name = (text: string | undefined): string | undefined => text?.replace(/:+$/, '');
  return [...markdown.matchAll(/\bnpm run ([a-z][\w:-]*)(?: -- ([a-z][\w:-]*))?/gi)].map(([, script, argument]) => ({
    script: name(script) ?? '',
    argument: name(argument),
  }));
}

describe('the docs: links, named scripts and length', () => {
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
  const benches = readdirSync(join(ROOT, 'bench')).filter((name) => name.endsWith('.bench.ts'));

  it("a heading's anchor is GitHub's slug of the heading", () => {
    const slugs = headingSlugs(
      '# Calling the API\n## Running as root and the embedded database\n### `GET /v1`\n' +
        '## Outgoing requests: SSRF rules\n## API-key cache\n## Limits\n## Limits\n```\n# not a heading\n```\n',
    );
    assert.deepEqual(
      [...slugs],
      [
        'calling-the-api',
        'running-as-root-and-the-embedded-database',
        'get-v1',
        'outgoing-requests-ssrf-rules',
        'api-key-cache',
        'limits',
        'limits-1',
      ],
    );
  });

  it('a link to a missing file, outside the repository or to a missing heading is reported', () => {
    const markdown =
      '[ok](api.md#limits) [gone](nowhere.md) [out](../../shared/docs/api-v1.md) [anchor](api.md#no-such-heading) ' +
      '[web](https://example.com/x.md) [self](#here)\n## Here\n```\n[in code](missing.md)\n```\n';
    assert.deepEqual(brokenLinks('docs/sample.md', markdown), [
      'docs/sample.md: nowhere.md (no file docs/nowhere.md in the repository)',
      'docs/sample.md: ../../shared/docs/api-v1.md (no file ../shared/docs/api-v1.md in the repository)',
      'docs/sample.md: api.md#no-such-heading (no heading #no-such-heading in docs/api.md)',
    ]);
  });

  it('every relative link in README.md and docs/*.md resolves to a file of the repository and an existing heading', () => {
    const files = documents();
    assert.ok(files.length >= 8, `README.md and the seven guides: ${files.join(', ')}`);
    const broken = files.flatMap((path) => brokenLinks(path, read(path)));
    assert.deepEqual(broken, []);
  });

  it('every `npm run <script>` the docs name is a script of package.json', () => {
    const named = documents().flatMap((path) => npmRuns(read(path)).map(({ script }) => ({ path, script })));
    assert.ok(named.length > 10, `${named.length} npm run commands found`);
    const missing = named
      .filter(({ script }) => !scripts.includes(script))
      .map((m) => `${m.path}: npm run ${m.script}`);
    assert.deepEqual(missing, []);
  });

  it('every `npm run bench -- <name>` the docs name selects a benchmark in bench/', () => {
    const named = documents().flatMap((path) =>
      npmRuns(read(path))
        .filter(({ script, argument }) => script === 'bench' && argument !== undefined)
        .map(({ argument = '' }) => ({ path, argument })),
    );
    assert.ok(named.length > 0, 'the docs name benchmarks');
    const missing = named
      .filter(({ argument }) => !benches.some((bench) => bench.includes(argument)))
      .map(({ path, argument }) => `${path}: npm run bench -- ${argument}`);
    assert.deepEqual(missing, []);
  });

  it('every `npm run ops -- <command>` the docs name is a command of the CLI', () => {
    const named = documents().flatMap((path) =>
      npmRuns(read(path))
        .filter(({ script, argument }) => script === 'ops' && argument !== undefined)
        .map(({ argument = '' }) => ({ path, argument })),
    );
    assert.ok(named.length > 0, 'the docs name CLI commands');
    const missing = named
      .filter(({ argument }) => !(argument in OPS_COMMANDS))
      .map(({ path, argument }) => `${path}: npm run ops -- ${argument}`);
    assert.deepEqual(missing, []);
  });

  it(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const lines = read('README.md').replace(/\n$/, '').split('\n').length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines`);
  });

  it('README.md shows the two commands a newcomer runs, `npm ci && npm start` and `npm ci && npm test`', () => {
    const readme = read('README.md');
    assert.ok(readme.includes('npm ci && npm start'));
    assert.ok(readme.includes('npm ci && npm test'));
  });

  it('the docs speak of the project, never of numbered stops, issues or findings', () => {
    const mentions = documents().flatMap((path) =>
      [...read(path).matchAll(/\b(stop|issue|finding) [0-9]+\b/gi)].map(([match]) => `${path}: ${match}`),
    );
    assert.deepEqual(mentions, []);
  });
});
