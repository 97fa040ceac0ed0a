import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

/**
 * Each table is read and written only by its own bounded context. This spec
 * reads the TypeScript sources (not the build) and fails when SQL in one
 * context names another context's table, so the module graph tells the whole
 * truth about which context depends on which. ESLint's no-restricted-imports
 * (eslint.config.mjs) keeps the other half: no context imports another's
 * entities, repositories or presenters.
 */
const TABLE_OWNERS: Record<string, readonly string[]> = {
  identity: ['organiser', 'api_key'],
  venues: ['venue', 'venue_location'],
  events: ['event', 'idempotency_key'],
  orders: ['order', 'order_line_item'],
  webhooks: ['webhook_subscription', 'webhook_delivery', 'webhook_delivery_attempt', 'webhook_warning'],
};

/** Shared infrastructure, owned by no context (src/database, src/common). */
const SHARED_TABLES: readonly string[] = ['service_setting', 'migrations', 'rate_limit_counter', 'service_instance'];

/**
 * Crossings that are allowed, each with the reason. Keep it short: a new
 * entry needs the same justification in review.
 */
const ALLOWED: ReadonlyArray<{ file: string; table: string; why: string }> = [];

const SQL_NAMING = (table: string): RegExp =>
  new RegExp(String.raw`\b(?:FROM|JOIN|INTO|UPDATE|TABLE|ON)\s+(?:ONLY\s+)?"?${table}"?(?![\w"])`);

export interface Crossing {
  file: string;
  context: string;
  table: string;
  owner: string;
}

/** Every place a context's source names, in SQL, a table another context owns. */
export function crossingsIn(sources: ReadonlyMap<string, string>): Crossing[] {
  const crossings: Crossing[] = [];
  for (const [file, text] of sources) {
    const context = /^src\/([^/]+)\//.exec(file)?.[1];
    if (context === undefined || TABLE_OWNERS[context] === undefined) continue;
    for (const [owner, tables] of Object.entries(TABLE_OWNERS)) {
      if (owner === context) continue;
      for (const table of tables) {
        if (SQL_NAMING(table).test(text)) crossings.push({ file, context, table, owner });
      }
    }
  }
  return crossings;
}

const ROOT = resolve(__dirname, '..', '..');

function sourcesUnder(folder: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) for (const [file, text] of sourcesUnder(path)) found.set(file, text);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) {
      found.set(relative(ROOT, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  }
  return found;
}

describe('bounded contexts own their tables', () => {
  it('finds no SQL in one context naming another context’s table, outside the allow-list', () => {
    const crossings = crossingsIn(sourcesUnder(join(ROOT, 'src'))).filter(
      (crossing) => !ALLOWED.some((allowed) => allowed.file === crossing.file && allowed.table === crossing.table),
    );
    assert.deepEqual(crossings, []);
  });

  it('fails on a planted crossing (Orders reading the event table)', () => {
    const planted = new Map([
      ['src/orders/order.repository.ts', 'await db.query(`SELECT 1 FROM event WHERE id = $1`)'],
    ]);
    assert.deepEqual(crossingsIn(planted), [
      { file: 'src/orders/order.repository.ts', context: 'orders', table: 'event', owner: 'events' },
    ]);
  });

  it('knows the owner of every table the migrations create', () => {
    const migrations = sourcesUnder(join(ROOT, 'src', 'database', 'migrations'));
    const created = new Set<string>();
    for (const text of migrations.values()) {
      for (const match of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?(\w+)"?/g)) created.add(match[1] ?? '');
    }
    const owned = new Set([...Object.values(TABLE_OWNERS).flat(), ...SHARED_TABLES]);
    assert.deepEqual(
      [...created].filter((table) => !owned.has(table)),
      [],
      'a new table needs an owner in TABLE_OWNERS',
    );
  });

  it('keeps every allow-list entry necessary', () => {
    const crossings = crossingsIn(sourcesUnder(join(ROOT, 'src')));
    for (const allowed of ALLOWED) {
      assert.ok(
        crossings.some((crossing) => crossing.file === allowed.file && crossing.table === allowed.table),
        `${allowed.file} no longer names ${allowed.table}: remove it from ALLOWED`,
      );
    }
  });
});
