import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The repository's root (tests run from dist/test/…). */
const ROOT = resolve(__dirname, '..', '..', '..');

/**
 * The public contract, read where the repository expects it: `../shared/docs/api-v1.md`
 * beside the repository. A linked worktree sits elsewhere, so the main worktree's
 * neighbour is tried next. Missing everywhere is an error, never a skip.
 */
export function contractPath(): string {
  const candidates = [join(ROOT, '..', 'shared', 'docs', 'api-v1.md')];
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    candidates.push(join(dirname(common), '..', 'shared', 'docs', 'api-v1.md'));
  } catch {
    // Not a git checkout: only the first place counts.
  }
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) throw new Error(`The contract api-v1.md is not at ${candidates.join(' nor ')}`);
  return found;
}

export interface ContractTable {
  /** Header cells, as written. */
  header: string[];
  /** Body rows, cells trimmed. */
  rows: string[][];
}

export interface ContractSection {
  /** Heading text without the hashes, e.g. `GET /v1` or `Event (response shape; …)`. */
  title: string;
  level: number;
  tables: ContractTable[];
}

function cellsOf(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** The Markdown's `##` and `###` sections with the tables each holds, in order. */
export function contractSections(markdown: string): ContractSection[] {
  const sections: ContractSection[] = [];
  let table: ContractTable | null = null;
  for (const line of markdown.split('\n')) {
    const heading = /^(#{2,3}) (.+)$/.exec(line);
    if (heading !== null) {
      sections.push({ title: (heading[2] ?? '').trim(), level: (heading[1] ?? '').length, tables: [] });
      table = null;
      continue;
    }
    if (!line.trim().startsWith('|')) {
      table = null;
      continue;
    }
    const current = sections[sections.length - 1];
    if (current === undefined) continue;
    const cells = cellsOf(line);
    if (table === null) {
      table = { header: cells, rows: [] };
      current.tables.push(table);
    } else if (!cells.every((cell) => /^:?-+:?$/.test(cell))) {
      table.rows.push(cells);
    }
  }
  return sections;
}

export function readContractSections(): ContractSection[] {
  return contractSections(readFileSync(contractPath(), 'utf8'));
}
