import { createHash } from 'node:crypto';
import type { CustomTypesConfig, FieldDef, Pool, QueryArrayConfig, QueryArrayResult, QueryResultRow } from 'pg';
import { PG_READ_TIMEOUT } from '../closing-client';
import { parameterReferences, SqlFragment, SqlParameter, type SqlParameters } from './sql-fragment';
import type { SqlConnection, SqlTarget } from './sql-target';
import { compileRowBuilder, type RowBuilder } from './row-builder';
import { ISO_TIMESTAMP_TYPES } from './timestamptz-text';

export interface StatementOptions {
  /**
   * Kept by PostgreSQL as a named prepared statement on each pooled
   * connection: parsed and planned once per connection instead of on every
   * run. Worth it on a hot path (every request, every delivery); a rare
   * statement (the dashboard, an operation) is sent unnamed and leaves no
   * plan behind.
   */
  prepared: boolean;
  /**
   * Waits as long as its answer takes, past DB_STATEMENT_TIMEOUT_SECONDS:
   * only for maintenance whose wait is its point (a detach that waits for
   * older transactions to end), never on a request's path.
   */
  unbounded?: true;
}

/**
 * The wait of an `unbounded` statement: the longest a timer holds (about 24
 * days). pg reads a query's own timeout of 0 as "the pool's", which bounds
 * every query of the application's pool, so "none" is written as this.
 */
const UNBOUNDED_WAIT_MS = 2 ** 31 - 1;

/**
 * One SQL statement with named parameters, compiled once, at module load:
 * `${p.deliveryId}` becomes `$1` however often it is used, and `run` takes
 * the values as an object (`recordAttempt.rows({ deliveryId, leaseToken }, tx)`),
 * so a call site can neither swap two values nor forget one.
 */
export class SqlStatement<Params extends object, Row extends QueryResultRow = QueryResultRow> {
  /** The text PostgreSQL receives, with `$1 … $n`. */
  readonly text: string;
  /** The prepared statement's name (derived from the text), or undefined for an unnamed statement. */
  readonly name: string | undefined;
  /** Parameter names in `$n` order. */
  readonly parameterNames: readonly string[];
  /** Type parsers for a statement that reads a view's timestamps as ISO strings; pg's defaults otherwise. */
  readonly types: CustomTypesConfig | undefined;
  /** Makes this statement's row objects (see rowBuilderFor). */
  private rowBuilder: { columns: readonly string[]; build: RowBuilder<Row> } | undefined;
  /**
   * What every run sends besides its values, inherited by each run's query
   * config: pg copies a config's own properties, descriptor by descriptor,
   * on every query (about a microsecond each), and an inherited one is read
   * where it is instead.
   */
  private readonly queryConfig: Readonly<Omit<QueryArrayConfig, 'values'>>;

  constructor(fragment: SqlFragment, options: StatementOptions) {
    const names: string[] = [];
    const text = fragment.parts
      .map((part) => {
        if (!(part instanceof SqlParameter)) return part;
        let index = names.indexOf(part.name);
        if (index < 0) index = names.push(part.name) - 1;
        return `$${index + 1}`;
      })
      .join('');
    this.text = text;
    this.parameterNames = names;
    this.types = fragment.readsIsoTimestamps ? ISO_TIMESTAMP_TYPES : undefined;
    // One text is one name on every pooled connection (pg refuses a name reused for another text);
    // 20 hex digits of SHA-1 put collisions out of reach and stay far under NAMEDATALEN (63).
    this.name = options.prepared ? `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}` : undefined;
    this.queryConfig = Object.freeze({ name: this.name, text, types: this.types, rowMode: 'array' as const });
    this.unbounded = options.unbounded === true;
  }

  private readonly unbounded: boolean;

  /** The values in `$n` order. A parameter left undefined is refused: `null` is how a statement is given SQL NULL. */
  values(params: Params): unknown[] {
    return this.parameterNames.map((name) => {
      const value = (params as Record<string, unknown>)[name];
      if (value === undefined) throw new Error(`SQL parameter "${name}" was not given`);
      return value;
    });
  }

  async rows(params: Params, target: SqlTarget): Promise<Row[]> {
    return (await this.execute(params, target)).rows;
  }

  /** The first row, or null when the statement returned none. */
  async one(params: Params, target: SqlTarget): Promise<Row | null> {
    return (await this.execute(params, target)).rows[0] ?? null;
  }

  /** How many rows an UPDATE, INSERT or DELETE touched. */
  async affected(params: Params, target: SqlTarget): Promise<number> {
    return (await this.execute(params, target)).rowCount ?? 0;
  }

  /** Rows arrive as arrays, and become objects through this statement's own builder (row-builder.ts). */
  private async execute(params: Params, target: SqlTarget): Promise<{ rows: Row[]; rowCount: number | null }> {
    const values = this.values(params);
    const connection = await target.sqlConnection();
    const config = Object.create(this.queryConfig) as QueryArrayConfig & { query_timeout?: number };
    config.values = values;
    if (this.unbounded) config.query_timeout = UNBOUNDED_WAIT_MS;
    else if (target.statementTimeoutMs !== undefined) config.query_timeout = target.statementTimeoutMs;
    let result: QueryArrayResult;
    try {
      result =
        this.unbounded && isPool(connection)
          ? await unboundedOnPool(connection, config)
          : await connection.query(config);
    } catch (error) {
      if (!(error instanceof Error) || error.message !== PG_READ_TIMEOUT) throw error;
      target.abandonConnection?.();
      throw new Error(
        `the database sent no answer within ${String(target.statementTimeoutMs)} ms (DB_STATEMENT_TIMEOUT_SECONDS); the connection was closed`,
        { cause: error },
      );
    }
    if (result.rows.length === 0) return { rows: [], rowCount: result.rowCount };
    return { rows: result.rows.map(this.rowBuilderFor(result.fields)), rowCount: result.rowCount };
  }

  /** This statement's row builder, made on its first result and kept while its columns stay the same. */
  private rowBuilderFor(fields: readonly FieldDef[]): RowBuilder<Row> {
    const built = this.rowBuilder;
    if (built !== undefined && sameColumns(built.columns, fields)) return built.build;
    const columns = fields.map((field) => field.name);
    const build = compileRowBuilder<Row>(columns);
    this.rowBuilder = { columns, build };
    return build;
  }
}

function sameColumns(columns: readonly string[], fields: readonly FieldDef[]): boolean {
  if (columns.length !== fields.length) return false;
  for (let i = 0; i < fields.length; i += 1) if (columns[i] !== fields[i]!.name) return false;
  return true;
}

/**
 * Defines a statement: `build` receives a reference per parameter and returns
 * the text with the `sql` tag. Call it once per statement, at module load
 * (a constant beside the repository that runs it), never per request.
 *
 *     const RELEASE_LEASE = defineStatement<{ deliveryId: string; leaseToken: string }>(
 *       (p) => sql`UPDATE webhook_delivery SET lease_token = NULL
 *                   WHERE id = ${p.deliveryId} AND lease_token = ${p.leaseToken}`,
 *       { prepared: false },
 *     );
 */
export function defineStatement<Params extends object, Row extends QueryResultRow = QueryResultRow>(
  build: (p: SqlParameters<Params>) => SqlFragment,
  options: StatementOptions,
): SqlStatement<Params, Row> {
  return new SqlStatement<Params, Row>(build(parameterReferences<Params>()), options);
}

/** A statement without parameters. */
export type NoParams = Record<string, never>;
export const NO_PARAMS: NoParams = {};

/** pg's pool (the `Database`'s connection), as opposed to one client of a transaction or of its own. */
function isPool(connection: SqlConnection): connection is Pool {
  return typeof (connection as Partial<Pool>).connect === 'function' && 'totalCount' in connection;
}

/**
 * An unbounded statement outside a transaction (DETACH … CONCURRENTLY, which cannot run inside one): on a
 * connection of its own, with the server's own statement bound lifted for it (the pool's connections carry
 * one, see database.module.ts) and put back before the connection returns to the pool.
 */
async function unboundedOnPool(pool: Pool, config: QueryArrayConfig): Promise<QueryArrayResult> {
  const client = await pool.connect();
  let healthy = false;
  try {
    await client.query('SET statement_timeout = 0');
    const result = await client.query(config);
    await client.query('RESET statement_timeout');
    healthy = true;
    return result;
  } finally {
    // A connection whose bound may still be lifted is not lent again.
    client.release(!healthy);
  }
}
