import { Inject, Injectable, Logger, OnModuleInit, ServiceUnavailableException } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { roleDuties } from '../config/service-role';
import { MIGRATIONS_TABLE } from '../database/data-source-options';
import { migrationName } from '../database/schema-migrations';
import { sql, sqlText } from '../database/sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import { WebhookDeliveryWorker } from '../webhooks/delivery/webhook-delivery.worker';

/** A probe must answer well inside a platform's probe timeout (often 1 s): each check gets this long. */
export const CHECK_TIMEOUT_MS = 800;

const APPLIED_MIGRATIONS = defineStatement<NoParams, { name: string }>(
  () => sql`SELECT name FROM ${sqlText(MIGRATIONS_TABLE)}`,
  { prepared: false },
);

export type CheckState = 'up' | 'down';

/**
 * The worker sweeps at least every WEBHOOK_POLL_MS; three missed sweeps (and
 * never less than 30 s, so one slow sweep under load is not an outage) mean
 * its loop is stuck. Until the first sweep, the time of start counts.
 */
export function workerStaleAfterMs(pollMs: number): number {
  return Math.max(3 * pollMs, 30_000);
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
}

/**
 * What `/readyz` answers: can this instance serve? It can when the database
 * answers within the timeout, every migration this build knows is applied,
 * and, where its role runs the delivery worker, the worker's loop has run
 * recently. The checks run through
 * @nestjs/terminus (its TypeORM ping and its indicator sessions with
 * timeouts); only the answer's shape is ours (the contract's
 * `{status, checks}`). From the moment shutdown begins the answer is
 * not-ready, without asking anything, so a load balancer stops sending
 * traffic at once.
 */
@Injectable()
export class ReadinessService implements OnModuleInit {
  private readonly logger = new Logger('Readiness');
  private readonly startedAt = Date.now();
  private shuttingDown = false;
  private lastAnswer: boolean | null = null;
  private worker: Pick<WebhookDeliveryWorker, 'lastLoopAt'> | null = null;
  private running: Promise<Readiness> | null = null;

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
    private readonly sqlDatabase: Database,
    private readonly moduleRef: ModuleRef,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    // Looked up rather than injected, so the webhooks module need not export its worker.
    this.worker = this.moduleRef.get(WebhookDeliveryWorker, { strict: false });
  }

  /** Called first thing on SIGTERM/SIGINT. */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Probes that arrive while a check runs share it: `/readyz` needs no
   * credential and is never rate-limited, so a flood of probes must not
   * become a flood of database checks. One check runs at a time, and every
   * answer comes from a check that was still running when it was asked.
   */
  check(): Promise<Readiness> {
    if (this.shuttingDown) return Promise.resolve({ ready: false, checks: { shutdown: 'down' } });
    this.running ??= this.runChecks().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runChecks(): Promise<Readiness> {
    let result: HealthCheckResult;
    try {
      result = await this.health.check([
        () => this.database.pingCheck('database', { timeout: CHECK_TIMEOUT_MS }),
        () => this.migrationsApplied(),
        // Only where the worker runs (not on an `api` instance): the body names the checks this instance makes.
        ...(roleDuties(this.config).runsDeliveryWorker ? [() => this.deliveryWorkerAlive()] : []),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      result = error.getResponse() as HealthCheckResult;
    }
    const checks: Record<string, CheckState> = {};
    for (const [name, detail] of Object.entries(result.details)) checks[name] = detail.status === 'up' ? 'up' : 'down';
    const ready = Object.values(checks).every((state) => state === 'up');
    this.noteChange(ready, result);
    // A shutdown that began while the checks ran wins.
    return this.shuttingDown ? { ready: false, checks: { ...checks, shutdown: 'down' } } : { ready, checks };
  }

  private migrationsApplied(): PromiseLike<HealthIndicatorResult<'migrations'>> {
    return this.indicators
      .check('migrations')
      .attempt(async () => {
        const rows = await APPLIED_MIGRATIONS.rows(NO_PARAMS, this.sqlDatabase);
        const applied = new Set(rows.map((row) => row.name));
        const pending = this.dataSource.migrations.map(migrationName).filter((name) => !applied.has(name));
        if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`);
      })
      .withTimeout(CHECK_TIMEOUT_MS);
  }

  private deliveryWorkerAlive(): HealthIndicatorResult<'deliveryWorker'> {
    const session = this.indicators.check('deliveryWorker');
    const ageMs = Date.now() - (this.worker?.lastLoopAt ?? this.startedAt);
    return ageMs <= workerStaleAfterMs(this.config.webhooks.pollMs)
      ? session.up()
      : session.down({ message: `no sweep for ${ageMs} ms` });
  }

  /** One log line per change of answer, not one per probe. */
  private noteChange(ready: boolean, result: HealthCheckResult): void {
    if (this.lastAnswer === ready) return;
    this.lastAnswer = ready;
    if (ready) this.logger.log('ready: every check is up');
    else this.logger.warn(`not ready: ${JSON.stringify(result.error ?? {})}`);
  }
}
