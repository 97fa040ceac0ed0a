import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { within } from '../../libs/time/within';
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
    // Each read answers for its own gauges: a slow one (the webhook figures behind a held horizon) must not
    // blank the others, least of all the oldest transaction's age that explains it.
    // A read that hangs must not hang the scrape: each is given up after CHECK_TIMEOUT_MS.
    const [figures, queueDeadRows, oldestTransactionSeconds] = await Promise.allSettled([
      within(this.webhooks.current(), CHECK_TIMEOUT_MS, 'the webhook figures'),
      within(this.webhooks.queueDeadRows(), CHECK_TIMEOUT_MS, 'the queue dead rows'),
      within(this.horizon.oldestTransactionSeconds(), CHECK_TIMEOUT_MS, 'the oldest transaction'),
    ]);
    // Unknown is not zero: NaN keeps a lag alert from reading "all clear" while the database is away.
    const known = figures.status === 'fulfilled' ? figures.value : undefined;
    webhookGauges.lagSeconds.set(known?.lagSeconds ?? Number.NaN);
    webhookGauges.pending.set(known?.pending ?? Number.NaN);
    webhookGauges.disabledSubscriptions.set(known?.disabledSubscriptions ?? Number.NaN);
    webhookGauges.queueDeadRows.set(queueDeadRows.status === 'fulfilled' ? queueDeadRows.value : Number.NaN);
    transactionHorizonGauges.oldestTransactionSeconds.set(
      oldestTransactionSeconds.status === 'fulfilled' ? oldestTransactionSeconds.value : Number.NaN,
    );
    const failed = [figures, queueDeadRows, oldestTransactionSeconds].find((read) => read.status === 'rejected');
    if (failed !== undefined) this.logger.warn(`database metrics unavailable: ${String(failed.reason)}`);
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
