/** Makes one row object from a row's values, in column order. */
export type RowBuilder<Row> = (values: unknown[]) => Row;

/**
 * A row builder for one statement's columns: a single object literal of
 * those columns, so every row of the statement has one shape V8 knows.
 *
 * Why not pg's own row objects: pg fills each row by assigning its columns
 * by name, in one loop shared by every statement, which V8 cannot specialise
 * for any of them once a service runs more than a handful of statements. A
 * literal per statement is built at a fraction of that cost
 * (`npm run bench -- row-objects`; docs/performance.md).
 */
export function compileRowBuilder<Row>(columns: readonly string[]): RowBuilder<Row> {
  const properties = columns.map(
    // A key spelled `__proto__` in a literal would set the prototype; computed, it is an own property.
    (name, i) => `${name === '__proto__' ? `[${JSON.stringify(name)}]` : JSON.stringify(name)}: v[${i}]`,
  );
  // The text is made of JSON string literals and indices only, never of a value.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('v', `return { ${properties.join(', ')} };`) as RowBuilder<Row>;
}
