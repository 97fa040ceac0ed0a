import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve(__dirname, '..', '..', '..', '..', 'src');

/**
 * Where SQL may be sent some other way: the kit itself, the migrations (the
 * schema's history, run by TypeORM), and creating a database before the
 * service has one (a maintenance connection; an identifier cannot be a parameter).
 */
const EXEMPT = [/^database\/sql\//, /^database\/migrations\//, /^database\/ensure-database\.ts$/];

/** The idioms the kit replaced: raw queries, query builders, numbered parameters past three. */
const FORBIDDEN: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /\.query\s*[(<]/, why: 'a raw query (write it with defineStatement)' },
  { pattern: /createQueryBuilder|QueryBuilder\b/, why: 'a query builder (write it with defineStatement)' },
  { pattern: /\$(?:[4-9]|[1-9]\d)\b/, why: 'a positional parameter past $3 (name it)' },
];

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

export function sqlRuleViolations(files: ReadonlyArray<{ path: string; text: string }>): string[] {
  return files.flatMap(({ path, text }) =>
    EXEMPT.some((exempt) => exempt.test(path))
      ? []
      : FORBIDDEN.filter(({ pattern }) => pattern.test(text)).map(({ why }) => `${path}: ${why}`),
  );
}

describe('one way to write SQL (docs/architecture.md, "Writing SQL: one way")', () => {
  it('sends SQL only through the kit or the entity API, in every folder of src/', () => {
    const files = sources(SRC).map((path) => ({
      path: relative(SRC, path).split('\\').join('/'),
      text: readFileSync(path, 'utf8'),
    }));
    assert.ok(files.length > 100, 'the scan found the source tree');
    assert.deepEqual(sqlRuleViolations(files), []);
  });

  it('reports a raw query, a query builder and a fourth positional parameter wherever they are planted', () => {
    assert.deepEqual(
      sqlRuleViolations([
        { path: 'metrics/figures.ts', text: "await this.dataSource.query('SELECT 1')" },
        { path: 'orders/order.repository.ts', text: 'manager.createQueryBuilder().update(OrderEntity)' },
        { path: 'webhooks/x.repository.ts', text: 'WHERE a = $1 AND b = $4' },
        { path: 'database/migrations/1-X.ts', text: "await queryRunner.query('ALTER TABLE x')" },
      ]),
      [
        'metrics/figures.ts: a raw query (write it with defineStatement)',
        'orders/order.repository.ts: a query builder (write it with defineStatement)',
        'webhooks/x.repository.ts: a positional parameter past $3 (name it)',
      ],
    );
  });
});
