import { runWhenExecuted } from './support/bench-environment';
import { loadAverageAtStart } from './support/bench-machine';
import { median } from './support/median';
import { compileRowBuilder } from '../src/database/sql/row-builder';
import { ISO_TIMESTAMP_TYPES } from '../src/database/sql/timestamptz-text';

// pg's result parser, as the driver uses it for every statement (not part of its typed API).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Result = require('pg/lib/result.js') as new (
  rowMode: string | undefined,
  types: unknown,
) => { addFields(fields: unknown[]): void; parseRow(values: unknown[]): unknown };

/**
 * `npm run bench -- row-objects`: what turning a page of rows into objects
 * costs, pg's own row objects against arrays and a literal per statement
 * (src/database/sql/row-builder.ts), on a page of 50 orders as PostgreSQL
 * sends them (text values, timestamps through the ISO parser). Before it
 * measures, pg's parser sees a dozen other statements' columns, as in a
 * running service, where it is never specialised for one statement.
 */
const ORDER_COLUMNS: Array<[string, number]> = [
  ['id', 25],
  ['eventId', 25],
  ['status', 25],
  ['isRsvp', 16],
  ['quantity', 20],
  ['totalAmountMinor', 20],
  ['currency', 25],
  ['billingName', 25],
  ['billingEmail', 25],
  ['attributionSource', 25],
  ['createdAt', 1184],
  ['updatedAt', 1184],
];
const ROW: unknown[] = [
  'ord_0123456789abcdef01234567',
  'evt_0123456789abcdef01234567',
  'confirmed',
  'f',
  '2',
  '2000',
  'EUR',
  'Jane Doe',
  'jane@example.com',
  null,
  '2026-11-27 10:00:00.123456+00',
  '2026-11-27 10:00:00.123456+00',
];
const PAGE = 50;
const PAGES = Number(process.env['BENCH_ROW_PAGES'] ?? 20_000);

function fieldsOf(columns: Array<[string, number]>, suffix = ''): unknown[] {
  return columns.map(([name, dataTypeID]) => ({ name: `${name}${suffix}`, dataTypeID, format: 'text' }));
}

/** pg's row objects: one page, parsed as the driver does. */
function objectPage(): unknown[] {
  const result = new Result(undefined, ISO_TIMESTAMP_TYPES);
  result.addFields(fieldsOf(ORDER_COLUMNS));
  const rows: unknown[] = [];
  for (let i = 0; i < PAGE; i += 1) rows.push(result.parseRow(ROW));
  return rows;
}

const build = compileRowBuilder(ORDER_COLUMNS.map(([name]) => name));
/** Arrays from pg, then the statement's own literal. */
function arrayPage(): unknown[] {
  const result = new Result('array', ISO_TIMESTAMP_TYPES);
  result.addFields(fieldsOf(ORDER_COLUMNS));
  const rows: unknown[][] = [];
  for (let i = 0; i < PAGE; i += 1) rows.push(result.parseRow(ROW) as unknown[]);
  return rows.map(build);
}

function microsPerPage(page: () => unknown[]): number {
  let kept: unknown[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < PAGES; i += 1) kept = page();
  const micros = Number(process.hrtime.bigint() - started) / 1000 / PAGES;
  if (kept.length !== PAGE) throw new Error('a page lost rows');
  return micros;
}

async function main(): Promise<void> {
  const load = loadAverageAtStart((line) => process.stderr.write(`[row-objects] ${line}\n`));
  // A running service's parser has seen many statements' columns: so has this one, before anything is measured.
  for (let shape = 0; shape < 12; shape += 1) {
    for (const mode of [undefined, 'array']) {
      const result = new Result(mode, ISO_TIMESTAMP_TYPES);
      result.addFields(fieldsOf(ORDER_COLUMNS, `_${shape}`));
      for (let i = 0; i < 2_000; i += 1) result.parseRow(ROW);
    }
  }
  const figures = { objects: [] as number[], arrays: [] as number[] };
  for (let round = 0; round < 5; round += 1) {
    figures.objects.push(microsPerPage(objectPage));
    figures.arrays.push(microsPerPage(arrayPage));
  }
  const objects = median(figures.objects);
  const arrays = median(figures.arrays);
  process.stdout.write(
    [
      `## Rows as objects: a page of ${PAGE} orders, median of 5 rounds of ${PAGES.toLocaleString('en')} pages`,
      '',
      `load average ${load.toFixed(1)} at start`,
      '',
      `| pg's row objects | arrays and a literal per statement | ratio |`,
      '| --- | --- | --- |',
      `| ${objects.toFixed(1)} µs | ${arrays.toFixed(1)} µs | ${(arrays / objects).toFixed(2)}× |`,
      '',
    ].join('\n'),
  );
}

runWhenExecuted(module, main);
