import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { describe, it } from 'node:test';

// Compiled to dist/test/, so the repository is two folders up.
const ROOT = join(__dirname, '..', '..');
/** Folders the layout never lists: tooling, generated output and hidden files. */
const UNLISTED = new Set(['node_modules', 'dist']);
/** The developers' guide holds the layout. */
const GUIDE = 'docs/architecture.md';

interface LayoutEntry {
  /** The folder or file the line is about, relative to the repository. */
  path: string;
  /** Sub-paths named in its description (`request-id/`, `migrations/`), relative to it or to the root. */
  mentioned: string[];
}

/**
 * The "Layout" block of docs/architecture.md: each line that starts in the first column
 * names a path (`src/events/ orders/ venues/` names siblings), then a
 * description whose words ending in `/` are folders inside it.
 */
function layoutEntries(guide: string): LayoutEntry[] {
  const section = guide.split('\n## Layout\n')[1]?.split('\n## ')[0];
  assert.ok(section !== undefined, `${GUIDE} has a "## Layout" section`);
  const block = section.split('```')[1];
  assert.ok(block !== undefined, 'the Layout section has a code block');
  const entries: LayoutEntry[] = [];
  for (const line of block.split('\n').slice(1)) {
    const [names = '', description = ''] = line.split(/ {2,}/, 2);
    const mentioned = [...description.matchAll(/(?:^|[\s(,])([\w.-]+(?:\/[\w.-]+)*\/)(?=[\s,)]|$)/g)].map(
      ([, folder = '']) => folder,
    );
    if (names === '') {
      // A continuation line: its folders belong to the entry above.
      entries.at(-1)?.mentioned.push(...mentioned);
      continue;
    }
    const [first = '', ...siblings] = names.split(' ');
    entries.push({ path: first, mentioned });
    for (const sibling of siblings) {
      entries.push({ path: posix.join(posix.dirname(first.replace(/\/$/, '')), sibling), mentioned: [] });
    }
  }
  return entries;
}

function folders(path: string): string[] {
  return readdirSync(join(ROOT, path))
    .filter((name) => !name.startsWith('.') && !UNLISTED.has(name))
    .filter((name) => statSync(join(ROOT, path, name)).isDirectory());
}

describe('docs/architecture.md "Layout" matches the tree', () => {
  const entries = layoutEntries(readFileSync(join(ROOT, GUIDE), 'utf8'));

  it('every path the layout names exists', () => {
    assert.ok(entries.length > 10, `${entries.length} entries parsed`);
    for (const { path, mentioned } of entries) {
      assert.ok(existsSync(join(ROOT, path)), `${GUIDE} lists ${path}, which does not exist`);
      for (const folder of mentioned) {
        const inside = join(ROOT, path.endsWith('/') ? path : dirname(path), folder);
        assert.ok(existsSync(inside) || existsSync(join(ROOT, folder)), `${GUIDE} mentions ${folder} under ${path}`);
      }
    }
  });

  it('every folder at the top, in src/ and in src/common/ is in the layout', () => {
    const named = entries.flatMap(({ path, mentioned }) => [
      path,
      ...mentioned.map((folder) => posix.join(path, folder)),
    ]);
    // `src/main.ts` lists src/ too.
    const listed = new Set(
      named.flatMap((path) => path.split('/').map((_, i, parts) => `${parts.slice(0, i).join('/')}/`)),
    );
    for (const path of named) listed.add(path);
    for (const [parent, prefix] of [
      ['.', ''],
      ['src', 'src/'],
      ['src/common', 'src/common/'],
    ] as const) {
      for (const name of folders(parent)) {
        assert.ok(
          listed.has(`${prefix}${name}/`),
          `${prefix}${name}/ exists but the layout in ${GUIDE} does not list it`,
        );
      }
    }
  });
});
