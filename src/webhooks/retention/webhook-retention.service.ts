import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { roleDuties } from '../../config/service-role';
import { ScheduledJobs } from '../../database/jobs/scheduled-jobs';
import { UnitOfWork } from '../../database/unit-of-work';
import { DeliveryQueueRepository } from '../delivery/delivery-queue.repository';
import { DeliveryPartitionsRepository } from '../delivery-partitions.repository';
import { WebhookSubscriptionRepository } from '../webhook-subscription.repository';
import { describeError } from '../../common/logging/loggable-error';

export const RETENTION_INTERVAL_NAME = 'webhook-retention-purge';
const PURGE_EVERY_MS = 10 * 60 * 1000;
/** Rows per statement: each DELETE is short, so it never holds locks or the pool for long. */
export const PURGE_BATCH = 500;
/** Pause between batches, so a large backlog is worked off without crowding the delivery worker. */
const PAUSE_BETWEEN_BATCHES_MS = 50;
/** One run stops after this long; the next run continues. */
const RUN_BUDGET_MS = 20_000;
/**
 * Days of history partitions kept ready beyond today. The job runs every ten
 * minutes, so a week ahead survives a long outage of every instance that
 * runs it; a write to a day without its partition is refused whole (the
 * delivery stays queued, see AttemptRecorder) and makes the partition.
 */
export const PARTITION_DAYS_AHEAD = 7;

export interface PurgeCounts {
  deliveries: number;
  /** Attempts that went with their day partitions (from the statistics, so approximate). */
  attempts: number;
  /** Day partitions dropped. */
  partitions: number;
  warnings: number;
  subscriptions: number;
  /** Deliveries of deleted subscriptions left waiting (in flight at the deletion, never recorded), dropped. */
  orphaned: number;
}

/**
 * Bounded history (WEBHOOK_RETENTION_DAYS, 30 by default). Final deliveries
 * and attempts live in day partitions (migration DeliveryQueueAndHistory):
 * a day's partitions are detached concurrently and dropped whole once the
 * whole day is past retention, which deletes no row and leaves no dead rows,
 * and the coming days' partitions are made ahead, at start (where jobs run)
 * and on every run. Warnings older than the retention are deleted in small
 * batches, and so are subscriptions deleted that long ago once nothing of
 * theirs is pending. The queue (pending deliveries) is never touched,
 * whatever its age. It runs every ten minutes, on one instance at a time,
 * and never blocks delivery.
 */
@Injectable()
export class WebhookRetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookRetentionService.name);
  private run: Promise<PurgeCounts> | null = null;
  private preparing: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly partitions: DeliveryPartitionsRepository,
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly queue: DeliveryQueueRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly jobs: ScheduledJobs,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** On one instance at a time, wherever the role runs scheduled jobs. */
  onApplicationBootstrap(): void {
    this.jobs.every(RETENTION_INTERVAL_NAME, PURGE_EVERY_MS, () => this.purge());
    // At start as well: a service that was down for days has its coming days' partitions at once.
    if (roleDuties(this.config).runsScheduledJobs) this.preparing = this.prepareAhead();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.preparing;
    await this.run?.catch(() => undefined);
  }

  /** One purge run (concurrent calls share it). */
  purge(): Promise<PurgeCounts> {
    this.run ??= this.purgeInBatches().finally(() => {
      this.run = null;
    });
    return this.run;
  }

  /** Makes today's and the coming days' partitions; a failure is tried again by the next run (a week ahead). */
  private async prepareAhead(): Promise<void> {
    try {
      const made = await this.partitions.ensureDays(0, PARTITION_DAYS_AHEAD);
      if (made > 0) this.logger.log(`webhook history: made ${made} day partitions ahead`);
    } catch (error) {
      this.logger.warn(`webhook history partitions not made: ${describeError(error)}`);
    }
  }

  private async purgeInBatches(): Promise<PurgeCounts> {
    const days = this.config.webhooks.retentionDays;
    const counts: PurgeCounts = {
      deliveries: 0,
      attempts: 0,
      partitions: 0,
      warnings: 0,
      subscriptions: 0,
      orphaned: 0,
    };
    const deadline = Date.now() + RUN_BUDGET_MS;
    await this.preparing;
    await this.prepareAhead();
    try {
      const dropped = await this.partitions.dropExpired(days);
      counts.partitions += dropped.partitions;
      counts.deliveries += dropped.deliveries;
      counts.attempts += dropped.attempts;
      if (dropped.keptSkipped > 0) {
        this.logger.log(
          `webhook retention: kept ${dropped.keptSkipped} skipped deliveries of disabled subscriptions past ${days} days, for their recovery`,
        );
      }
    } catch (error) {
      this.logger.warn(`webhook history partitions not dropped: ${describeError(error)}`);
    }
    const steps: Array<['warnings' | 'subscriptions' | 'orphaned', () => Promise<number>]> = [
      ['warnings', () => this.subscriptions.purgeWarnings(days, PURGE_BATCH)],
      ['subscriptions', () => this.subscriptions.purgeDeleted(days, PURGE_BATCH)],
      // After the purge: a subscription whose last deliveries this drops is purged by a later run, never one
      // whose deliveries an earlier step of this run still counted as waiting.
      ['orphaned', () => this.unitOfWork.run((tx) => this.queue.dropOrphaned(PURGE_BATCH, tx))],
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
      this.logger.warn(`webhook retention purge stopped early: ${describeError(error)}`);
    }
    if (counts.orphaned > 0) {
      this.logger.log(
        `webhook retention: dropped ${counts.orphaned} deliveries left waiting for deleted subscriptions`,
      );
    }
    if (counts.partitions + counts.warnings + counts.subscriptions > 0) {
      this.logger.log(
        `webhook retention: purged ${counts.deliveries} deliveries and about ${counts.attempts} attempts ` +
          `(${counts.partitions} day partitions dropped), ${counts.warnings} warnings, ` +
          `${counts.subscriptions} deleted subscriptions older than ${days} days`,
      );
    }
    return counts;
  }
}
