import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CHECK_TIMEOUT_MS } from '../health/readiness.service';
import { databasePoolGauges, webhookGauges } from './service-metrics';

/** What pg's Pool exposes; TypeORM's Postgres driver keeps its pool as `master`. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options?: { max?: number };
}

/**
 * Gauges that are read, not counted: the outbox's backlog and lag and the
 * disabled subscriptions come from one SQL statement at scrape time (one
 * round trip per scrape, nothing kept in step by the write paths), the pool
 * figures from pg's Pool.
 *
 * The lag is how long the oldest delivery the worker could send now has been
 * due. Deliveries it may not send are left out, or an endpoint that is merely
 * down would look like a worker falling behind: those of disabled or deleted
 * subscriptions, and, for a failing subscription, everything behind its
 * oldest pending delivery (only that one is probed, on the backoff schedule).
 */
@Injectable()
export class DatabaseMetricsCollector {
  private readonly logger = new Logger(DatabaseMetricsCollector.name);

  constructor(private readonly dataSource: DataSource) {}

  async collect(): Promise<void> {
    this.collectPool();
    let timer: NodeJS.Timeout | undefined;
    try {
      // A database that hangs must not hang the scrape: the process metrics still go out.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      });
      const query: Promise<Array<{ lag_seconds: number | null; pending: number; disabled: number }>> =
        this.dataSource.query(
          `SELECT
             (SELECT extract(epoch FROM now() - min(d.next_attempt_at))::float8
                FROM webhook_delivery d JOIN webhook_subscription s ON s.id = d.subscription_id
               WHERE d.status = 'pending' AND d.next_attempt_at <= now()
                 AND s.enabled AND s.deleted_at IS NULL
                 AND (s.consecutive_failures = 0 OR NOT EXISTS (
                       SELECT 1 FROM webhook_delivery o
                        WHERE o.subscription_id = d.subscription_id AND o.status = 'pending' AND o.seq < d.seq))
             ) AS lag_seconds,
             (SELECT count(*)::int FROM webhook_delivery WHERE status = 'pending') AS pending,
             (SELECT count(*)::int FROM webhook_subscription WHERE NOT enabled AND deleted_at IS NULL) AS disabled`,
        );
      void query.catch(() => undefined); // settles later when the timeout won
      const [row] = await Promise.race([query, timeout]);
      webhookGauges.lagSeconds.set(Math.max(0, row?.lag_seconds ?? 0));
      webhookGauges.pending.set(row?.pending ?? 0);
      webhookGauges.disabledSubscriptions.set(row?.disabled ?? 0);
    } catch (error) {
      // Unknown is not zero: NaN keeps a lag alert from reading "all clear" while the database is away.
      for (const gauge of Object.values(webhookGauges)) gauge.set(Number.NaN);
      this.logger.warn(`webhook metrics unavailable: ${String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private collectPool(): void {
    const pool = (this.dataSource.driver as unknown as { master?: PoolCounts }).master;
    if (pool === undefined) return;
    databasePoolGauges.total.set(pool.totalCount);
    databasePoolGauges.idle.set(pool.idleCount);
    databasePoolGauges.waiting.set(pool.waitingCount);
    if (pool.options?.max !== undefined) databasePoolGauges.max.set(pool.options.max);
  }
}
