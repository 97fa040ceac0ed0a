import type { Client } from 'pg';

/**
 * What every table holds, as one hash and one row count per table, so a
 * fuzzer can tell that a request it sent changed nothing (no half-write).
 * Tables and columns written on their own schedule (the worker, the
 * heartbeats, the budgets) are left out, so that only a request's own
 * writes show.
 */
export interface TableSnapshot {
  hashes: Record<string, string>;
  counts: Record<string, number>;
}

/** Columns the delivery worker or the key-usage batch write on their own schedule, not the request's. */
const BACKGROUND_COLUMNS: Record<string, string[]> = {
  api_key: ['last_used_at'],
  webhook_subscription: ['last_status', 'consecutive_failures', 'enabled', 'updated_at'],
  // The queue and the history read as one (a final attempt moves a delivery from one to the other).
  webhook_delivery_all: [
    'status',
    'attempts',
    'last_status',
    'next_attempt_at',
    'lease_expires_at',
    'lease_token',
    'completed_at',
  ],
};

/**
 * Tables written on their own schedule, or by every request whatever its answer: the instances'
 * heartbeats, the scheduled jobs' leases, and the shared account budgets (a refused request costs its
 * account too).
 */
const BACKGROUND_TABLES = [
  'webhook_delivery_attempt',
  'webhook_delivery',
  'webhook_delivery_history',
  // The claims' turns move on their own schedule.
  'webhook_delivery_turn',
  'schema_migration',
  'service_instance',
  'job_lease',
  'rate_limit_counter',
];

export class TableSnapshots {
  private last: TableSnapshot | null = null;
  /** The WAL insert position read just before the last snapshot was taken. */
  private walBeforeLast: string | null = null;

  private constructor(
    private readonly db: Client,
    private readonly snapshotSql: string,
    /**
     * Whether the WAL shows every write to the snapshot's tables: they are all logged (an UNLOGGED table
     * writes none) and the server logs every change (wal_level above minimal). Then, where the WAL's
     * insert position has not moved since a snapshot began, no row changed and that snapshot still holds:
     * the tables are hashed again only after a write, the request's or the background's.
     */
    private readonly walShowsWrites: boolean,
  ) {}

  /**
   * Every table of the database but the background ones and its background columns; `also` leaves out
   * more, for a caller whose requests make other writes beside their own (a session's last use, the
   * delivery worker a resend wakes).
   */
  static async of(
    db: Client,
    also: { tables?: readonly string[]; columns?: Record<string, readonly string[]> } = {},
  ): Promise<TableSnapshots> {
    const skipped = new Set([...BACKGROUND_TABLES, ...(also.tables ?? [])]);
    const columnsLeftOut = (table: string): readonly string[] => [
      ...(BACKGROUND_COLUMNS[table] ?? []),
      ...(also.columns?.[table] ?? []),
    ];
    const tables = (
      await db.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      )
    ).rows.map((row) => row.table_name);
    const hashed = [...tables, 'webhook_delivery_all'].filter(
      (name) => !skipped.has(name) && !/^webhook_delivery_(history|attempt)_d[0-9]{8}$/.test(name),
    );
    // Every relation whose rows the hash reads: the hashed tables, the tables under a hashed view, and
    // their partitions (a partition can be UNLOGGED on its own).
    const [logging] = (
      await db.query<{ unlogged: number; minimal: boolean }>(
        `WITH RECURSIVE read(oid) AS (
           SELECT oid FROM pg_class WHERE oid = ANY($1::regclass[])
           UNION
           SELECT under.oid FROM read CROSS JOIN LATERAL (
             SELECT d.refobjid FROM pg_rewrite r
               JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                               AND d.refclassid = 'pg_class'::regclass
              WHERE r.ev_class = read.oid AND d.refobjid <> read.oid
             UNION
             SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = read.oid
           ) under(oid)
         )
         SELECT count(*) FILTER (WHERE c.relkind IN ('r', 'p', 'm') AND c.relpersistence <> 'p')::int AS unlogged,
                current_setting('wal_level') = 'minimal' AS minimal
           FROM read JOIN pg_class c ON c.oid = read.oid`,
        [hashed],
      )
    ).rows;
    const snapshotSql = `SELECT ${hashed
      .map((name) => {
        const row = `(to_jsonb(t) ${columnsLeftOut(name)
          .map((column) => `- '${column}'`)
          .join(' ')})::text`;
        return `(SELECT md5(coalesce(string_agg(${row}, '|' ORDER BY ${row}), '')) || ':' || count(*) FROM "${name}" t) AS "${name}"`;
      })
      .join(', ')}`;
    return new TableSnapshots(db, snapshotSql, logging?.unlogged === 0 && logging.minimal === false);
  }

  /** The state after the previous snapshot's request is the state before the next one's: the last one taken. */
  async latest(): Promise<TableSnapshot> {
    return this.last ?? (await this.take());
  }

  async take(): Promise<TableSnapshot> {
    const wal = this.walShowsWrites ? await this.walPosition() : null;
    if (wal !== null && wal === this.walBeforeLast && this.last !== null) return this.last;
    const row = (await this.db.query(this.snapshotSql)).rows[0] as Record<string, string>;
    const hashes: Record<string, string> = {};
    const counts: Record<string, number> = {};
    for (const [name, value] of Object.entries(row)) {
      const [hash, count] = value.split(':');
      hashes[name] = hash ?? '';
      counts[name] = Number(count);
    }
    this.walBeforeLast = wal;
    this.last = { hashes, counts };
    return this.last;
  }

  private async walPosition(): Promise<string> {
    return (await this.db.query<{ lsn: string }>(`SELECT pg_current_wal_insert_lsn()::text AS lsn`)).rows[0]?.lsn ?? '';
  }
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: TableSnapshot, after: TableSnapshot): string[] {
  return Object.keys(before.hashes).filter((name) => before.hashes[name] !== after.hashes[name]);
}
