import { Injectable } from '@nestjs/common';
import { sql } from '../database/sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';

/**
 * The age of the oldest open transaction of this database that holds the
 * xmin horizon back (it has a snapshot or a transaction id): while it stays
 * open, no row deleted or updated since it began can be vacuumed anywhere in
 * the database, so the delivery queue's dead rows pile up behind it. The
 * scrape's own backend is left out, and so is autovacuum, whose snapshot
 * holds nothing back.
 */
const OLDEST_TRANSACTION = defineStatement<NoParams, { seconds: number | null }>(
  () => sql`SELECT extract(epoch FROM now() - min(xact_start))::float8 AS seconds
         FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND backend_type <> 'autovacuum worker'
          AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)`,
  { prepared: false },
);

@Injectable()
export class TransactionHorizonRepository {
  constructor(private readonly database: Database) {}

  /** Seconds the oldest horizon-holding transaction has been open; 0 when there is none. */
  async oldestTransactionSeconds(): Promise<number> {
    const row = await OLDEST_TRANSACTION.one(NO_PARAMS, this.database);
    return Math.max(0, row?.seconds ?? 0);
  }
}
