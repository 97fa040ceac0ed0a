import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { failureName } from '../failure-name';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { roleDuties } from '../../config/service-role';
import { sql } from '../sql/sql-fragment';
import { defineStatement } from '../sql/sql-statement';
import { Database } from '../sql/sql-target';

/** A run's lease lasts this long and is renewed while the run lasts: a holder that dies blocks the job this long at most. */
export const JOB_LEASE_MS = 60_000;

export interface JobOptions {
  /** How long a run's lease lasts before it is renewed (JOB_LEASE_MS); shorter only in tests. */
  leaseMs?: number;
}

/** The work of one run; `signal` aborts when the lease is lost or the instance stops (work may stop early). */
export type JobWork = (signal: AbortSignal) => Promise<unknown>;

interface Job {
  name: string;
  periodMs: number;
  leaseMs: number;
  work: JobWork;
  run: Promise<void> | null;
  abort: AbortController | null;
  failing: boolean;
}

/**
 * Takes the job's next run when it is due (its last run started at least a
 * period ago, by the database clock) and nobody holds its lease, in one
 * conditional upsert: concurrent claims serialise on the row and only the
 * first finds the run due. A job never seen before gets its row and its
 * first run one period later (`holder` '' is nobody), as a timer would.
 */
const CLAIM = defineStatement<{ name: string; holder: string; leaseMs: number; periodMs: number }, { holder: string }>(
  (p) => sql`
    INSERT INTO job_lease AS lease (name, holder, leased_until, last_started_at)
    VALUES (${p.name}, '', now(), now())
    ON CONFLICT (name) DO UPDATE
       SET holder = ${p.holder},
           leased_until = now() + ${p.leaseMs}::int * interval '1 millisecond',
           last_started_at = now()
     WHERE lease.leased_until <= now()
       AND lease.last_started_at <= now() - ${p.periodMs}::int * interval '1 millisecond'
    RETURNING lease.holder`,
  { prepared: false },
);

/** Extends a lease still held; none when it ran out (another instance may run the job by now). */
const RENEW = defineStatement<{ name: string; holder: string; leaseMs: number }>(
  (p) => sql`
    UPDATE job_lease SET leased_until = now() + ${p.leaseMs}::int * interval '1 millisecond'
     WHERE name = ${p.name} AND holder = ${p.holder} AND leased_until > now()`,
  { prepared: false },
);

/** A run that ended gives its lease back, so the next due run is anyone's at once. */
const RELEASE = defineStatement<{ name: string; holder: string }>(
  (p) => sql`
    UPDATE job_lease SET leased_until = now()
     WHERE name = ${p.name} AND holder = ${p.holder} AND leased_until > now()`,
  { prepared: false },
);

/**
 * The scheduled jobs of the service (retention purges, idempotency purge,
 * ...): `every(name, periodMs, work)`. Each runs on one instance at a time
 * and once per period whatever the number of instances, and only on roles
 * that run jobs (`all`, `worker`; never the one-shot CLI).
 *
 * Why a lease row and not an advisory lock: a session-level advisory lock
 * belongs to the connection that took it, and the pool hands statements
 * whichever connection is free, so the unlock may run on another connection
 * (and fail) while the lock stays with an idle pooled connection for as
 * long as it lives; a dedicated connection per instance to hold the locks
 * costs one more connection of the budget and, when it drops, the lock is
 * gone silently while the work goes on. A lock also only says "one at a
 * time", not "once per period": two instances taking it one after the other
 * would both run. A row in `job_lease` is one short statement on the pool,
 * records when the last run started (so a handover never runs a job twice in
 * a period), and expires on the database's clock (so a holder that died is
 * replaced after the lease, whatever the instances' clocks say).
 */
@Injectable()
export class ScheduledJobs implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ScheduledJobs.name);
  /** Who holds a lease, as operators read it in `job_lease`. */
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly jobs = new Map<string, Job>();
  /** Runs this instance started, by job: what `scheduled_job_runs_total` reports (src/metrics/ reads it). */
  private readonly runs = new Map<string, number>();
  private started = false;
  private stopped = false;

  constructor(
    private readonly database: Database,
    private readonly scheduler: SchedulerRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Registers a job: it ticks wherever the role runs jobs, and runs when this
   * instance wins its due run. SCHEDULED_JOB_PERIOD_SECONDS, when set,
   * replaces `periodMs`. Returns what stops it ticking here.
   */
  every(name: string, periodMs: number, work: JobWork, options: JobOptions = {}): () => void {
    if (this.jobs.has(name)) throw new Error(`the scheduled job ${name} is registered twice`);
    const job: Job = {
      name,
      periodMs: this.config.scheduledJobPeriodMs ?? periodMs,
      leaseMs: options.leaseMs ?? JOB_LEASE_MS,
      work,
      run: null,
      abort: null,
      failing: false,
    };
    this.jobs.set(name, job);
    // Every role shows every job, at 0 where it never runs: a sum over instances needs no guessing.
    if (!this.runs.has(name)) this.runs.set(name, 0);
    if (this.started) this.tickEvery(job);
    return () => {
      if (this.scheduler.doesExist('interval', name)) this.scheduler.deleteInterval(name);
      this.jobs.delete(name);
    };
  }

  /** The jobs registered (whether or not this instance's role runs them). */
  get names(): string[] {
    return [...this.jobs.keys()];
  }

  /** Runs this instance started since it started, by job (every job ever registered here, 0 if none). */
  get runsStarted(): ReadonlyMap<string, number> {
    return this.runs;
  }

  onApplicationBootstrap(): void {
    if (!roleDuties(this.config).runsScheduledJobs) return;
    this.started = true;
    for (const job of this.jobs.values()) this.tickEvery(job);
  }

  /** Stops ticking and aborts runs in flight; each run gives its lease back when it ends. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs.values()) {
      if (this.scheduler.doesExist('interval', job.name)) this.scheduler.deleteInterval(job.name);
      job.abort?.abort();
    }
    await Promise.allSettled([...this.jobs.values()].flatMap((job) => (job.run === null ? [] : [job.run])));
  }

  /**
   * Asks often enough (a tenth of the period, from 50 ms to a minute) that a due
   * run starts soon after it is due, on whichever instance asks first.
   */
  private tickEvery(job: Job): void {
    const tickMs = Math.min(Math.max(Math.floor(job.periodMs / 10), 50), 60_000);
    const interval = setInterval(() => {
      if (this.stopped || job.run !== null) return;
      // Set at once, so a slow claim is never asked twice.
      job.run = this.tick(job).finally(() => {
        job.run = null;
      });
    }, tickMs);
    interval.unref();
    this.scheduler.addInterval(job.name, interval);
  }

  private async tick(job: Job): Promise<void> {
    let claimed: boolean;
    try {
      const row = await CLAIM.one(
        { name: job.name, holder: this.holder, leaseMs: job.leaseMs, periodMs: job.periodMs },
        this.database,
      );
      claimed = row?.holder === this.holder;
      job.failing = false;
    } catch (error) {
      if (!job.failing && !this.stopped) this.logger.warn(`could not claim ${job.name}: ${failureName(error)}`);
      job.failing = true;
      return;
    }
    if (claimed) await this.run(job);
  }

  private async run(job: Job): Promise<void> {
    this.runs.set(job.name, (this.runs.get(job.name) ?? 0) + 1);
    const abort = new AbortController();
    job.abort = abort;
    if (this.stopped) abort.abort();
    const renewal = setInterval(() => void this.renew(job, abort), Math.max(Math.floor(job.leaseMs / 3), 1));
    renewal.unref();
    try {
      await job.work(abort.signal);
    } catch (error) {
      this.logger.warn(`scheduled job ${job.name} failed: ${failureName(error)}`);
    } finally {
      clearInterval(renewal);
      job.abort = null;
    }
    try {
      await RELEASE.affected({ name: job.name, holder: this.holder }, this.database);
    } catch {
      // The lease runs out on its own.
    }
  }

  private async renew(job: Job, abort: AbortController): Promise<void> {
    if (abort.signal.aborted) return;
    try {
      const renewed = await RENEW.affected(
        { name: job.name, holder: this.holder, leaseMs: job.leaseMs },
        this.database,
      );
      if (renewed > 0) return;
    } catch (error) {
      // Unknown whether the lease still holds: counted as lost, so two runs never overlap knowingly.
      this.logger.warn(`could not renew the lease of ${job.name}: ${failureName(error)}`);
    }
    if (abort.signal.aborted) return;
    this.logger.warn(`scheduled job ${job.name} lost its lease; its run is asked to stop`);
    abort.abort();
  }
}
