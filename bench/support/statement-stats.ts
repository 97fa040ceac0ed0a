import { Client } from 'pg';

/** Server settings that make PostgreSQL keep per-statement figures (pg_stat_statements, nested statements too). */
export const STATEMENT_STATS_SETTINGS: Record<string, string> = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'all',
};

export interface StatementFigures {
  calls: number;
  /** Execution time, waits included (pg_stat_statements has no CPU figure). */
  totalMs: number;
  meanMs: number;
  rows: number;
  /** The statement's text, whitespace folded, cut to 100 characters. */
  statement: string;
}

/**
 * What each statement cost PostgreSQL over a window of a bench: `start()`
 * clears the figures, `top()` reads the costliest statements since. Needs a
 * server started with STATEMENT_STATS_SETTINGS.
 */
export async function statementStats(databaseUrl: string): Promise<{
  start(): Promise<void>;
  top(count: number): Promise<StatementFigures[]>;
  close(): Promise<void>;
}> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  return {
    async start() {
      await client.query('SELECT pg_stat_statements_reset()');
    },
    async top(count) {
      const { rows } = await client.query<{ calls: string; total: number; mean: number; rows: string; query: string }>(
        `SELECT calls, total_exec_time AS total, mean_exec_time AS mean, rows, query
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          ORDER BY total_exec_time DESC LIMIT $1`,
        [count],
      );
      return rows.map((row) => ({
        calls: Number(row.calls),
        totalMs: Math.round(row.total),
        meanMs: Math.round(row.mean * 1000) / 1000,
        rows: Number(row.rows),
        statement: row.query.replace(/\s+/g, ' ').slice(0, 100),
      }));
    },
    async close() {
      await client.end();
    },
  };
}
