import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ScheduledJobs } from '../../database/jobs/scheduled-jobs';
import { DeliveryHistoryRepository } from '../delivery-history.repository';
import { WebhookSubscriptionRepository } from '../webhook-subscription.repository';

export const RETENTION_INTERVAL_NAME = 'webhook-retention-purge';
const PURGE_EVERY_MS = 10 * 60 * 1000;
/** Rows per statement: each DELETE is short, so it never holds locks or the pool for long. */
export const PURGE_BATCH = 500;
/** Pause between batches, so a large backlog is worked off without crowding the delivery worker. */
const PAUSE_BETWEEN_BATCHES_MS = 50;
/** One run stops after this long; the next run continues. */
const RUN_BUDGET_MS = 20_000;

export interface PurgeCounts {
  deliveries: number;
  warnings: number;
  subscriptions: number;
}

/**
 * Bounded history (WEBHOOK_RETENTION_DAYS, 30 by default): final deliveries
 * (with their attempt logs) and warnings older than that are deleted, and so
 * are subscriptions deleted that long ago once nothing of theirs is pending.
 * Pending deliveries are never touched, whatever their age. It runs every
 * ten minutes (on one instance at a time) in small batches that skip locked rows, so it never blocks
 * delivery.
 */
@Injectable()
export class WebhookRetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookRetentionService.name);
  private run: Promise<PurgeCounts> | null = null;
  private stopped = false;

  constructor(
    private readonly deliveries: DeliveryHistoryRepository,
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly jobs: ScheduledJobs,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** On one instance at a time, wherever the role runs scheduled jobs. */
  onApplicationBootstrap(): void {
    this.jobs.every(RETENTION_INTERVAL_NAME, PURGE_EVERY_MS, () => this.purge());
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.run?.catch(() => undefined);
  }

  /** One purge run (concurrent calls share it). */
  purge(): Promise<PurgeCounts> {
    this.run ??= this.purgeInBatches().finally(() => {
      this.run = null;
    });
    return this.run;
  }

  private async purgeInBatches(): Promise<PurgeCounts> {
    const days = this.config.webhooks.retentionDays;
    const counts: PurgeCounts = { deliveries: 0, warnings: 0, subscriptions: 0 };
    const deadline = Date.now() + RUN_BUDGET_MS;
    const steps: Array<[keyof PurgeCounts, () => Promise<number>]> = [
      ['deliveries', () => this.deliveries.purgeFinished(days, PURGE_BATCH)],
      ['warnings', () => this.subscriptions.purgeWarnings(days, PURGE_BATCH)],
      ['subscriptions', () => this.subscriptions.purgeDeleted(days, PURGE_BATCH)],
    ];
    try {
      for (const [name, step] of steps) {
        for (;;) {
          if (this.stopped || Date.now() > deadline) return counts;
          const removed = await step();
          counts[name] += removed;
          if (removed < PURGE_BATCH) break;
          await sleep(PAUSE_BETWEEN_BATCHES_MS);
        }
      }
    } catch (error) {
      // The next run tries again; retention is never worth failing anything else for.
      this.logger.warn(`webhook retention purge stopped early: ${error instanceof Error ? error.message : 'error'}`);
    }
    if (counts.deliveries + counts.warnings + counts.subscriptions > 0) {
      this.logger.log(
        `webhook retention: purged ${counts.deliveries} deliveries, ${counts.warnings} warnings, ` +
          `${counts.subscriptions} deleted subscriptions older than ${days} days`,
      );
    }
    return counts;
  }
}
