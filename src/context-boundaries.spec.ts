import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';

/**
 * The boundaries of the whole of src/, read from the TypeScript sources (not
 * the build):
 * - each table is read and written only by its owner: SQL in any other
 *   folder naming it fails, so the module graph tells the whole truth about
 *   which part depends on which;
 * - every import follows the layer table (src/layers.json): down the layers,
 *   to a declared peer, into a context only through its surface; a folder or
 *   file of src/ the table does not name fails (fail closed), and so does a
 *   name in the table that src/ does not have.
 * ESLint's no-restricted-imports (eslint.config.mjs) is generated from the
 * same table, and the last tests here prove the two agree.
 */
const TABLE_OWNERS: Record<string, readonly string[]> = {
  identity: ['organiser', 'api_key'],
  venues: ['venue', 'venue_location'],
  events: ['event', 'idempotency_key'],
  orders: ['order', 'order_line_item'],
  webhooks: [
    'webhook_subscription',
    'webhook_delivery',
    'webhook_delivery_history',
    'webhook_delivery_turn',
    'webhook_delivery_flight',
    'webhook_delivery_attempt',
    'webhook_warning',
  ],
  dashboard: ['dashboard_session'],
  portal: ['portal_link', 'portal_session'],
};

/** Shared infrastructure, owned by no context (src/database, src/common). */
const SHARED_TABLES: readonly string[] = [
  'service_setting',
  'migrations',
  'job_lease',
  'rate_limit_counter',
  'service_instance',
];

/**
 * Crossings that are allowed, each with the reason. Keep it short: a new
 * entry needs the same justification in review.
 */
const ALLOWED: ReadonlyArray<{ file: string; table: string; why: string }> = [];

/** Where every table is created: the schema's history, not a reader of the tables. */
const MIGRATIONS = 'src/database/migrations/';

const SQL_NAMING = (table: string): RegExp =>
  new RegExp(String.raw`\b(?:FROM|JOIN|INTO|UPDATE|TABLE|ON)\s+(?:ONLY\s+)?"?${table}"?(?![\w"])`);

export interface Crossing {
  file: string;
  context: string;
  table: string;
  owner: string;
}

/** Every place a source file of src/ names, in SQL, a table that its own folder does not own. */
export function crossingsIn(sources: ReadonlyMap<string, string>): Crossing[] {
  const crossings: Crossing[] = [];
  for (const [file, source] of sources) {
    if (file.startsWith(MIGRATIONS)) continue;
    // An example in a comment (the SQL kit's documentation) reads no table.
    const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const context = unitOf(file);
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

/** The layer table, src/layers.json (eslint.config.mjs reads the same file). */
export interface LayerTable {
  layers: ReadonlyArray<{ name: string; units: readonly string[] }>;
  peers: Readonly<Record<string, readonly string[]>>;
  contexts: readonly string[];
  surface: readonly string[];
  moreSurface: Readonly<Record<string, readonly string[]>>;
  deepestFolder: number;
}

const LAYERS = JSON.parse(readFileSync(join(ROOT, 'src', 'layers.json'), 'utf8')) as LayerTable;

/** The unit of a path under src/: its top folder, or the file itself (`main.ts`) at the top. */
function unitOf(path: string, table: LayerTable = LAYERS): string {
  const [, first = '', ...rest] = path.split('/');
  if (rest.length > 0) return first;
  if (first.endsWith('.ts')) return first;
  const folders = table.layers.flatMap((layer) => layer.units).filter((unit) => !unit.endsWith('.ts'));
  return folders.includes(first) ? first : `${first}.ts`;
}

function layerOf(unit: string, table: LayerTable): number {
  return table.layers.findIndex((layer) => layer.units.includes(unit));
}

/** The units a unit may import: itself, every unit of a lower layer, its declared peers. */
export function allowedFrom(unit: string, table: LayerTable = LAYERS): string[] {
  const layer = layerOf(unit, table);
  return [
    unit,
    ...table.layers.slice(0, Math.max(layer, 0)).flatMap((lower) => lower.units),
    ...(table.peers[unit] ?? []),
  ];
}

/** A context's files that other units may import (paths inside it, without `.ts`). */
function surfaceOf(context: string, table: LayerTable): RegExp[] {
  return [...table.surface, ...(table.moreSurface[context] ?? [])].map((pattern) => new RegExp(`^(?:${pattern})$`));
}

const IMPORTED = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]*)['"]/gm;

export interface Violation {
  file: string;
  specifier: string;
  why: string;
}

/** Why importing `specifier` from `file` (a path under src/) breaks the layers, or null when it does not. */
export function importViolation(file: string, specifier: string, table: LayerTable = LAYERS): string | null {
  const target = posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.(?:ts|js)$/, '');
  if (target === 'libs' || target.startsWith('libs/')) return null;
  if (!target.startsWith('src/')) return `src/ reaches outside itself only into libs/, not ${target}`;
  const from = unitOf(file, table);
  const to = unitOf(target, table);
  if (to === from) return null;
  if (!allowedFrom(from, table).includes(to)) {
    const [fromLayer, toLayer] = [layerOf(from, table), layerOf(to, table)];
    if (toLayer < 0) return `${to} is not in the layer table`;
    if (toLayer > fromLayer) return `${from} runs up the layers into ${to}`;
    return `${from} reaches ${to}, which is not its declared peer`;
  }
  if (table.contexts.includes(to)) {
    const inside = target.slice(`src/${to}/`.length);
    if (!surfaceOf(to, table).some((surface) => surface.test(inside))) {
      return `${from} reaches ${to} past its module, services, domain events, DTOs, SQL fragments and OpenAPI fragment`;
    }
  }
  return null;
}

/** Every import in the given sources (paths under src/, spec files left out) that breaks the layers. */
export function layerViolationsIn(sources: ReadonlyMap<string, string>, table: LayerTable = LAYERS): Violation[] {
  const violations: Violation[] = [];
  for (const [file, text] of sources) {
    for (const [, specifier = ''] of text.matchAll(IMPORTED)) {
      const why = importViolation(file, specifier, table);
      if (why !== null) violations.push({ file, specifier, why });
    }
  }
  return violations;
}

/** Folders and source files at the top of src/ that the layer table does not name. */
export function unlistedIn(names: readonly string[], table: LayerTable = LAYERS): string[] {
  const units = new Set(table.layers.flatMap((layer) => layer.units));
  return names.filter((name) => !name.endsWith('.spec.ts') && name !== 'layers.json' && !units.has(name));
}

/** Names the layer table uses (units, peers, contexts, extra surfaces) that are not among the given names at the top of src/. */
export function absentIn(names: readonly string[], table: LayerTable = LAYERS): string[] {
  const present = new Set(names);
  const named = new Set([
    ...table.layers.flatMap((layer) => layer.units),
    ...Object.entries(table.peers).flatMap(([unit, peers]) => [unit, ...peers]),
    ...table.contexts,
    ...Object.keys(table.moreSurface),
  ]);
  return [...named].filter((name) => !present.has(name));
}

function eslintForRepository(): ESLint {
  return new ESLint({
    cwd: ROOT,
    overrideConfigFile: join(ROOT, 'eslint.config.mjs'),
    // Only the import rule runs, so no type information (and no project service) is needed.
    overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
  });
}

/** Whether ESLint's configuration for `file` refuses `specifier` (the rule's regex patterns, as ESLint applies them). */
async function eslintRefuses(eslint: ESLint, file: string, specifier: string): Promise<boolean> {
  const config = (await eslint.calculateConfigForFile(join(ROOT, file))) as {
    rules?: Record<string, [unknown, { patterns?: Array<{ regex: string }> }?]>;
  };
  const [severity, options] = config.rules?.['no-restricted-imports'] ?? [0];
  if (severity === 0 || severity === 'off') return false;
  return (options?.patterns ?? []).some(({ regex }) => new RegExp(regex, 'iu').test(specifier));
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

/** Folders and `.ts` files at the top of src/. */
function topOfSrc(): string[] {
  return readdirSync(join(ROOT, 'src')).filter(
    (name) => name.endsWith('.ts') || name === 'layers.json' || statSync(join(ROOT, 'src', name)).isDirectory(),
  );
}

describe('every import follows the layers of src/', () => {
  it('names every folder and file at the top of src/ in the layer table', () => {
    assert.deepEqual(unlistedIn(topOfSrc()), [], 'a new folder of src/ needs its place in src/layers.json');
  });

  it('fails on a folder the layer table does not name', () => {
    assert.deepEqual(unlistedIn([...topOfSrc(), 'reports']), ['reports']);
  });

  it('names no folder or file that src/ does not have', () => {
    assert.deepEqual(absentIn(topOfSrc()), [], 'a unit of src/layers.json that is gone needs its entry removed');
  });

  it('fails on a unit or peer the layer table names that src/ does not have', () => {
    const planted: LayerTable = {
      ...LAYERS,
      layers: LAYERS.layers.map((layer) =>
        layer.name === 'edges' ? { ...layer, units: [...layer.units, 'instances'] } : layer,
      ),
      peers: { ...LAYERS.peers, metrics: [...(LAYERS.peers['metrics'] ?? []), 'reports'] },
    };
    assert.deepEqual(absentIn(topOfSrc(), planted), ['instances', 'reports']);
  });

  it('finds no import that runs up the layers or reaches past a context’s surface', () => {
    assert.deepEqual(layerViolationsIn(sourcesUnder(join(ROOT, 'src'))), []);
  });

  it('fails on a planted import in metrics/ reaching a context past its surface', () => {
    const planted = new Map([
      [
        'src/metrics/planted.ts',
        "import { WebhookSubscription } from '../webhooks/entities/webhook-subscription.entity';",
      ],
    ]);
    assert.deepEqual(layerViolationsIn(planted), [
      {
        file: 'src/metrics/planted.ts',
        specifier: '../webhooks/entities/webhook-subscription.entity',
        why: 'metrics reaches webhooks past its module, services, domain events, DTOs, SQL fragments and OpenAPI fragment',
      },
    ]);
  });

  it('fails on a planted import in common/ running up into metrics/ and webhooks/', () => {
    const planted = new Map([
      [
        'src/common/openapi/planted.ts',
        "import { metricsRegistry } from '../../metrics/service-metrics';\n" +
          "export type { OpenApiFragment } from '../../webhooks/webhooks.service';",
      ],
    ]);
    assert.deepEqual(
      layerViolationsIn(planted).map(({ why }) => why),
      ['common runs up the layers into metrics', 'common runs up the layers into webhooks'],
    );
  });

  it('fails on a planted import in database/ running up into common/', () => {
    const planted = new Map([['src/database/planted.ts', "import { Page } from '../common/envelope/page';"]]);
    assert.deepEqual(
      layerViolationsIn(planted).map(({ why }) => why),
      ['database runs up the layers into common'],
    );
  });

  it('fails on a planted import between two edges that are not declared peers', () => {
    const planted = new Map([['src/health/planted.ts', "import { MetricsModule } from '../metrics/metrics.module';"]]);
    assert.deepEqual(
      layerViolationsIn(planted).map(({ why }) => why),
      ['health reaches metrics, which is not its declared peer'],
    );
  });

  it('fails on a planted SQL crossing in metrics/ (a table Orders owns)', () => {
    const planted = new Map([['src/metrics/planted.ts', 'await db.query(`SELECT count(*) FROM "order"`)']]);
    assert.deepEqual(crossingsIn(planted), [
      { file: 'src/metrics/planted.ts', context: 'metrics', table: 'order', owner: 'orders' },
    ]);
  });

  it('keeps every source file within the folder depth the import rule is generated for', () => {
    const tooDeep = [...sourcesUnder(join(ROOT, 'src')).keys()].filter(
      (file) => file.split('/').length - 2 > LAYERS.deepestFolder,
    );
    assert.deepEqual(tooDeep, [], 'raise deepestFolder in src/layers.json');
  });
});

describe('ESLint’s import rule is the layer table too', () => {
  const eslint = eslintForRepository();
  const units = LAYERS.layers.flatMap((layer) => layer.units);
  const probes = (unit: string): string[] =>
    unit.endsWith('.ts')
      ? [unit.slice(0, -'.ts'.length)]
      : [
          `${unit}/${unit}.module`,
          `${unit}/a.service`,
          `${unit}/dto/a.dto`,
          `${unit}/entities/a.entity`,
          `${unit}/a.repository`,
        ];

  it('refuses exactly the imports the spec refuses, from every unit to every unit', async () => {
    const disagreements: string[] = [];
    for (const from of units) {
      const files = from.endsWith('.ts') ? [`src/${from}`] : [`src/${from}/a.ts`, `src/${from}/inner/a.ts`];
      for (const file of files) {
        const up = from.endsWith('.ts') ? './' : '../'.repeat(file.split('/').length - 2);
        for (const target of [...units, 'reports'].flatMap(probes)) {
          const specifier = `${up}${target}`;
          const spec = importViolation(file, specifier) !== null;
          if ((await eslintRefuses(eslint, file, specifier)) !== spec) {
            disagreements.push(`${file} → ${specifier}: spec ${spec ? 'refuses' : 'allows'}`);
          }
        }
      }
    }
    assert.deepEqual(disagreements, []);
  });

  it('reports a planted import in metrics/, common/ and database/', async () => {
    const planted: Array<[string, string]> = [
      [
        'src/metrics/planted.ts',
        "export { WebhookSubscription } from '../webhooks/entities/webhook-subscription.entity';\n",
      ],
      ['src/common/http/planted.ts', "export { metricsRegistry } from '../../metrics/service-metrics';\n"],
      ['src/database/planted.ts', "export { DomainError } from '../common/errors/domain-error';\n"],
    ];
    for (const [file, text] of planted) {
      const [result] = await eslint.lintText(text, { filePath: join(ROOT, file) });
      assert.deepEqual(
        result?.messages.map(({ ruleId }) => ruleId),
        ['no-restricted-imports'],
        `${file} is reported`,
      );
    }
  });
});
