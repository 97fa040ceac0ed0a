import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { NO_PARAMS } from '../sql/sql-statement';
import { Database, type SqlTarget } from '../sql/sql-target';
import { UnitOfWork } from '../unit-of-work';
import { serviceVersion } from './service-version';
import { ConnectionBudgetRefusal, connectionBudgetProblem, dedicatedConnections } from './connection-budget';
import { failureName } from '../failure-name';
import { processRuns } from '../embedded-keeper';
import { sealingKeyId } from '../../../libs/webhooks/sealing-key-id';
import {
  CONNECTION_FIGURES,
  DEREGISTER,
  FORGET_INSTANCES,
  HEARTBEAT,
  HOST_INSTANCES,
  LIVE_INSTANCES,
  LIVE_SEALING_KEYS,
  LOCK_REGISTRATIONS,
  type InstanceRow,
} from './instance-statements';

/** How often an instance says it is alive; tests may shorten it before an instance starts. */
export const INSTANCE_HEARTBEAT = { intervalMs: 5_000 };
/** An instance that missed this many heartbeats (on the database clock) is gone. */
export const MISSED_HEARTBEATS_WHEN_GONE = 3;

/**
 * How many instances serve the public API on this database now, as last seen
 * (at least one): those an account's requests are spread over, so the ones a
 * budget is shared among. A `worker` serves none.
 */
export interface LiveInstanceCount {
  liveApiInstances(): number;
}

/**
 * The instances serving this database, in PostgreSQL (table
 * `service_instance`): each records itself at start, heartbeats every few
 * seconds, and deletes its row when it stops; a row three heartbeats stale
 * (on the database clock) is an instance that is gone, not listed, not
 * counted, and purged by the next heartbeat of any instance. The live count
 * sizes the rate limiter's local share when its counter is unreachable, and
 * the live pools are what a starting instance's connection check adds up.
 * One-shot commands (`npm run ops`) are not instances and do not register.
 */
@Injectable()
export class InstanceRegistry implements OnApplicationBootstrap, OnModuleDestroy, LiveInstanceCount {
  readonly id = randomUUID();
  /** This process, as `ps` shows it: with the host, what matches the registry's row to a process. */
  readonly pid = process.pid;
  readonly host = hostname();
  private readonly logger = new Logger(InstanceRegistry.name);
  private readonly version = serviceVersion();
  private startedAt: string | null = null;
  private liveApiCount = 1;
  private warnedOfMemoryStore = false;
  private timer: NodeJS.Timeout | null = null;
  private failing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly database: Database,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  private get goneAfterSeconds(): number {
    return (MISSED_HEARTBEATS_WHEN_GONE * INSTANCE_HEARTBEAT.intervalMs) / 1000;
  }

  /**
   * Checks the connection budget and registers, under one lock so two
   * starting instances cannot both squeeze in. An instance that would fit
   * but for others that missed a heartbeat (one killed a moment ago, whose
   * replacement this may be) waits for them to be counted as gone, checking
   * again each second, rather than being refused for connections that no
   * longer exist.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.runBackgroundWork) return;
    const own = { poolMax: this.config.dbPoolMax, dedicated: dedicatedConnections(this.config) };
    const lateAfterSeconds = (1.5 * INSTANCE_HEARTBEAT.intervalMs) / 1000;
    for (let waitedSeconds = 0; ; waitedSeconds += 1) {
      const refusal = await this.unitOfWork.run(async (tx) => {
        await LOCK_REGISTRATIONS.rows(NO_PARAMS, tx);
        await this.forgetPredecessors(tx);
        const figures = await CONNECTION_FIGURES.one(
          { id: this.id, goneAfterSeconds: this.goneAfterSeconds, lateAfterSeconds },
          tx,
        );
        if (figures === null) throw new Error('the connection figures query returned no row');
        const problem = connectionBudgetProblem(figures, own);
        if (problem === null) {
          await this.beat(tx);
          return null;
        }
        const withoutLate = {
          ...figures,
          other_instances: figures.other_instances - figures.late_instances,
          other_connections: figures.other_connections - figures.late_connections,
        };
        return {
          problem,
          late: figures.late_instances,
          fitsWithoutLate: connectionBudgetProblem(withoutLate, own) === null,
        };
      });
      if (refusal === null) {
        // The id GET /internal/instances and the dashboard list, said where the process's own lines are.
        this.logger.log(
          `registered as instance ${this.id} (pid ${this.pid} on ${this.host}, role ${this.config.serviceRole})`,
        );
        break;
      }
      if (!refusal.fitsWithoutLate || waitedSeconds >= this.goneAfterSeconds)
        throw new ConnectionBudgetRefusal(refusal.problem);
      if (waitedSeconds === 0) {
        this.logger.warn(
          `the connection budget fits only without ${refusal.late} instance(s) that missed a heartbeat; waiting up to ${this.goneAfterSeconds} s for them to be counted as gone`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    this.timer = setInterval(() => void this.heartbeat(), INSTANCE_HEARTBEAT.intervalMs);
    this.timer.unref();
  }

  /**
   * On the embedded default every instance on the database runs on this
   * machine, so a row of this host whose process no longer runs is an
   * instance that is gone (killed: one that stops deletes its row), most
   * often the one this start replaces on its data folder. It is removed now
   * instead of being counted for up to three heartbeats, in the connection
   * budget and as another instance serving the API. A row with this
   * process's own pid is a predecessor too (a container's restart gives the
   * same pid again); one whose pid another process has taken since keeps
   * being counted until it ages out. With DATABASE_URL nothing says that a
   * host name is one machine's alone, and no row is judged this way.
   */
  private async forgetPredecessors(tx: SqlTarget): Promise<void> {
    if (!this.config.keepsEmbeddedServer) return;
    const rows = await HOST_INSTANCES.rows({ id: this.id, host: this.host }, tx);
    const gone = rows.filter((row) => row.pid === this.pid || !processRuns(row.pid));
    if (gone.length === 0) return;
    await FORGET_INSTANCES.affected({ ids: gone.map((row) => row.id) }, tx);
    for (const row of gone) {
      this.logger.log(
        `removed instance ${row.id} from the registry: its process (pid ${row.pid} on this machine) no longer runs, stopped without a SIGTERM`,
      );
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
    try {
      await DEREGISTER.affected({ id: this.id }, this.database);
    } catch (error) {
      this.logger.warn(`could not remove this instance from the registry (it ages out): ${failureName(error)}`);
    }
  }

  liveApiInstances(): number {
    return this.liveApiCount;
  }

  /** The live instances, oldest first. */
  listLive(): Promise<InstanceRow[]> {
    return LIVE_INSTANCES.rows({ goneAfterSeconds: this.goneAfterSeconds }, this.database);
  }

  /** The live instances with the ids of the webhook sealing keys each can open (null: not recorded). */
  liveSealingKeys(): Promise<Array<{ id: string; host: string; sealingKeyIds: string[] | null }>> {
    return LIVE_SEALING_KEYS.rows({ goneAfterSeconds: this.goneAfterSeconds }, this.database);
  }

  /** One heartbeat (the timer's; also callable, so a test need not wait for the timer). */
  async heartbeat(): Promise<void> {
    try {
      await this.beat(this.database);
      if (this.failing) this.logger.log('the instance registry is reachable again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`instance heartbeat failed (retrying): ${failureName(error)}`);
      this.failing = true;
    }
  }

  private async beat(target: SqlTarget): Promise<void> {
    const row = await HEARTBEAT.one(
      {
        id: this.id,
        host: this.host,
        pid: this.pid,
        role: this.config.serviceRole,
        version: this.version,
        poolMax: this.config.dbPoolMax,
        dedicatedConnections: dedicatedConnections(this.config),
        sealingKeyIds: sealingKeyIdsOf(this.config),
        startedAt: this.startedAt,
        goneAfterSeconds: this.goneAfterSeconds,
      },
      target,
    );
    if (row === null) return;
    this.startedAt ??= row.started_at;
    const servesApi = this.config.serviceRole !== 'worker';
    this.liveApiCount = Math.max(1, row.live_api_others + (servesApi ? 1 : 0));
    if (servesApi && this.config.rateLimit.store === 'memory' && row.live_api_others > 0 && !this.warnedOfMemoryStore) {
      this.warnedOfMemoryStore = true;
      this.logger.warn(
        `RATE_LIMIT_STORE=memory counts this instance's requests alone, and ${row.live_api_others} other instance(s) serve the API on this database: together they may serve an account several times its budget; set RATE_LIMIT_STORE=database to share it`,
      );
    }
  }
}

/** What this instance can open: its WEBHOOK_SECRET_KEY and WEBHOOK_SECRET_KEY_PREVIOUS, by id. */
function sealingKeyIdsOf(config: AppConfig): string[] {
  const keys = config.webhooks.secretKey === null ? [] : [config.webhooks.secretKey];
  return [...keys, ...config.webhooks.previousSecretKeys].map(sealingKeyId);
}
