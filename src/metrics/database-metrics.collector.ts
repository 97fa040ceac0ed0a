import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CHECK_TIMEOUT_MS } from '../health/readiness.service';
import { WebhookFiguresService } from '../webhooks/webhook-figures.service';
import { databasePoolGauges, transactionHorizonGauges, webhookGauges } from './service-metrics';
import { TransactionHorizonRepository } from './transaction-horizon.repository';

/** What pg's Pool exposes; TypeORM's Postgres driver keeps its pool as `master`. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options?: { max?: number };
}

/**
 * Gauges that are read, not counted: the outbox's backlog and lag and the
 * disabled subscriptions are read from Webhooks at scrape time (its
 * WebhookFiguresService says what each one leaves out), the oldest
 * transaction's age from pg_stat_activity, the pool figures from pg's Pool.
 */
@Injectable()
export class DatabaseMetricsCollector {
  private readonly logger = new Logger(DatabaseMetricsCollector.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly webhooks: WebhookFiguresService,
    private readonly horizon: TransactionHorizonRepository,
  ) {}

  async collect(): Promise<void> {
    this.collectPool();
    let timer: NodeJS.Timeout | undefined;
    try {
      // A database that hangs must not hang the scrape: the process metrics still go out.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      });
      const read = Promise.all([
        this.webhooks.current(),
        this.webhooks.queueDeadRows(),
        this.horizon.oldestTransactionSeconds(),
      ]);
      void read.catch(() => undefined); // settles later when the timeout won
      const [figures, queueDeadRows, oldestTransactionSeconds] = await Promise.race([read, timeout]);
      webhookGauges.lagSeconds.set(figures.lagSeconds);
      webhookGauges.pending.set(figures.pending);
      webhookGauges.disabledSubscriptions.set(figures.disabledSubscriptions);
      webhookGauges.queueDeadRows.set(queueDeadRows);
      transactionHorizonGauges.oldestTransactionSeconds.set(oldestTransactionSeconds);
    } catch (error) {
      // Unknown is not zero: NaN keeps a lag alert from reading "all clear" while the database is away.
      for (const gauge of Object.values(webhookGauges)) gauge.set(Number.NaN);
      transactionHorizonGauges.oldestTransactionSeconds.set(Number.NaN);
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
