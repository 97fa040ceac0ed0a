import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { randomUUID } from 'node:crypto';
import { traceparentFor } from '../../../libs/trace/trace-context';
import {
  describeSchedule,
  parseCidrList,
  signPayloadWithAll,
  standardWebhooksSignature,
  type ParsedCidr,
} from '../../../libs/webhooks';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { roleDuties } from '../../config/service-role';
import { countDeliveryAttempt, deliveryOutcomeLabel, recordClaimDuration } from './delivery-metrics';
import { WebhookSecretCipher } from '../secrets/webhook-secret.cipher';
import type { AttemptTrigger } from '../webhook-event-types';
import type { ClaimedDelivery } from './claimed-delivery';
import { AttemptRecordRepository } from './attempt-record.repository';
import { DeliveryClaimRepository } from './delivery-claim.repository';
import { planAfterAttempt, planManualAttempt, type RetrySchedule } from './attempt-plan';
import { AttemptRecorder } from './attempt-recorder';
import { DeliveryNotifications } from './delivery-notifications';
import { SigningSecrets } from './signing-secrets';
import { WebhookSender } from './webhook-sender';
import { describeError } from '../../common/logging/loggable-error';

export const SWEEP_INTERVAL_NAME = 'webhook-delivery-sweep';
/** Attempts in flight from this instance, across all subscriptions. */
const MAX_IN_FLIGHT = 64;
/** Attempts in flight per subscription, across all instances (design notes). */
export const MAX_IN_FLIGHT_PER_SUBSCRIPTION = 4;
/** A lease outlives the attempt's deadline by this much, for the write that records it. */
const LEASE_MARGIN_MS = 5_000;
/**
 * How long shutdown waits at most for attempts in flight before cutting them
 * short: the contract's 10 s acknowledgement window and the record's write.
 * An attempt cut short is sent again by another instance, and its receiver,
 * which may have acted on it, sees it twice; with the default
 * WEBHOOK_TIMEOUT_MS every attempt in flight ends on its own first.
 */
const SHUTDOWN_GRACE_MS = 10_500;
const USER_AGENT = 'Service-Webhooks/1.0';

interface InFlight {
  delivery: ClaimedDelivery;
  abort: AbortController;
  done: Promise<void>;
}

/** Claims failing since `since` (epoch ms): how many failed, and each failure already logged. */
interface ClaimOutage {
  since: number;
  failed: number;
  said: Set<string>;
}

/**
 * Sends what the outbox holds. It wakes on a timer (`WEBHOOK_POLL_MS`,
 * registered with the SchedulerRegistry), on this instance's commits (the
 * outbox listener) and on other instances' commits (LISTEN/NOTIFY); each
 * wake claims due deliveries under a lease and starts one attempt per
 * claimed delivery. Every attempt ends in a recorded outcome; an attempt that
 * never gets recorded (crash, kill) leaves a lease that expires, and the
 * delivery is sent again. Several instances can run this at once: claims
 * skip whatever another worker holds.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly sender = new WebhookSender();
  private readonly allowedPrivate: ParsedCidr[];
  private readonly schedule: RetrySchedule;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly recorder: AttemptRecorder;
  private readonly secrets: SigningSecrets;
  private running = false;
  private sweep: Promise<void> | null = null;
  private wanted = false;
  private lastSweepAt: number | null = null;
  private claimOutage: ClaimOutage | null = null;

  constructor(
    private readonly claims: DeliveryClaimRepository,
    attempts: AttemptRecordRepository,
    cipher: WebhookSecretCipher,
    private readonly notifications: DeliveryNotifications,
    private readonly scheduler: SchedulerRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.allowedPrivate = parseCidrList(config.webhooks.allowPrivateCidrs);
    this.recorder = new AttemptRecorder((records) => attempts.recordAttempts(records));
    this.secrets = new SigningSecrets(cipher);
    this.schedule = {
      baseMs: config.webhooks.backoffBaseMs,
      maxMs: config.webhooks.backoffMaxMs,
      maxAttempts: config.webhooks.maxAttempts,
    };
  }

  onApplicationBootstrap(): void {
    // `npm run ops` boots the same module for one command, and an `api` instance only writes deliveries:
    // the instances whose role runs the worker send them.
    if (!roleDuties(this.config).runsDeliveryWorker) return;
    this.running = true;
    const interval = setInterval(() => this.wake(), this.config.webhooks.pollMs);
    interval.unref();
    this.scheduler.addInterval(SWEEP_INTERVAL_NAME, interval);
    this.notifications.start(() => this.wake());
    const waits = describeSchedule(this.schedule).map((ms) => `${Math.round(ms / 1000)}s`);
    this.logger.log(
      `webhook delivery: ${this.schedule.maxAttempts} attempts, retry waits ${waits.join(', ') || 'none'} (±20%), ` +
        `${this.config.webhooks.timeoutMs} ms deadline`,
    );
    this.wake();
  }

  /** Looks for due deliveries now. Cheap and idempotent: concurrent wakes fold into one sweep. */
  wake(): void {
    if (!this.running) return;
    this.wanted = true;
    this.sweep ??= this.drain().finally(() => {
      this.lastSweepAt = Date.now();
      this.sweep = null;
      // A wake that arrived while the sweep was finishing must not wait for the next poll.
      if (this.wanted) this.wake();
    });
  }

  /** When a sweep last finished (epoch ms; null before the first): the readiness check's sign of life. */
  get lastLoopAt(): number | null {
    return this.lastSweepAt;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.scheduler.doesExist('interval', SWEEP_INTERVAL_NAME)) this.scheduler.deleteInterval(SWEEP_INTERVAL_NAME);
    await this.notifications.stop();
    await this.sweep;
    // Attempts in flight get a brief chance to finish and be recorded ...
    const grace = Math.min(this.config.webhooks.timeoutMs + 500, SHUTDOWN_GRACE_MS);
    await Promise.race([
      Promise.allSettled([...this.inFlight.values()].map((attempt) => attempt.done)),
      new Promise((resolve) => setTimeout(resolve, grace).unref()),
    ]);
    // ... then are cut short and their leases given back, so another instance sends them at once.
    const cut = [...this.inFlight.values()];
    for (const attempt of cut) attempt.abort.abort();
    await Promise.allSettled(cut.map((attempt) => attempt.done));
    try {
      await this.claims.releaseLeases(cut.map(({ delivery }) => delivery));
    } catch (error) {
      this.logger.warn(
        `could not give back ${cut.length} delivery leases; they expire on their own: ${describeError(error)}`,
      );
    }
    this.sender.destroy();
  }

  private async drain(): Promise<void> {
    while (this.running && this.wanted) {
      this.wanted = false;
      const room = MAX_IN_FLIGHT - this.inFlight.size;
      // Full: each attempt that finishes wakes the worker again.
      if (room <= 0) return;
      let claimed: ClaimedDelivery[];
      const claimStarted = performance.now();
      try {
        claimed = await this.claims.claim({
          maxDeliveries: room,
          perSubscription: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
          leaseMs: this.config.webhooks.timeoutMs + LEASE_MARGIN_MS,
          leaseToken: randomUUID(),
        });
        recordClaimDuration((performance.now() - claimStarted) / 1000);
      } catch (error) {
        if (this.running) this.claimFailed(error);
        // The poll tries again; re-waking now would spin on a database that is down.
        this.wanted = false;
        return;
      }
      this.claimsBack();
      for (const delivery of claimed) this.start(delivery);
      if (claimed.length === room) this.wanted = true;
    }
  }

  /**
   * Once per outage, as the notification connection, the instance registry
   * and the rate limiter say theirs: a database that is down fails every
   * poll's claim, and a line per poll would bury the one that says why. A
   * failure described otherwise than those already said (the database
   * answers again but refuses the statement) is news, and is said too.
   */
  private claimFailed(error: unknown): void {
    const described = describeError(error);
    const outage = (this.claimOutage ??= { since: Date.now(), failed: 0, said: new Set() });
    outage.failed += 1;
    if (outage.said.has(described)) return;
    outage.said.add(described);
    this.logger.warn(
      outage.said.size === 1
        ? `could not claim webhook deliveries (retrying at each poll; said again when claims succeed): ${described}`
        : `could not claim webhook deliveries, failing otherwise now: ${described}`,
    );
  }

  private claimsBack(): void {
    const outage = this.claimOutage;
    if (outage === null) return;
    this.claimOutage = null;
    const seconds = ((Date.now() - outage.since) / 1000).toFixed(1);
    this.logger.log(
      `webhook deliveries are claimed again, after ${seconds} s in which ${outage.failed} ` +
        `${outage.failed === 1 ? 'claim' : 'claims'} failed`,
    );
  }

  private start(delivery: ClaimedDelivery, trigger: AttemptTrigger = 'scheduled'): void {
    const abort = new AbortController();
    const done = this.attempt(delivery, abort.signal, trigger)
      .catch((error: unknown) => {
        // Unrecorded: the lease expires and the delivery is attempted again.
        this.logger.error(`webhook delivery ${delivery.id} attempt was not recorded: ${describeError(error)}`);
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        this.wake();
      });
    this.inFlight.set(delivery.id, { delivery, abort, done });
  }

  /**
   * Makes one attempt of a delivery the caller has leased (a resend) now,
   * tracked like the worker's own (shutdown waits for it). The attempt is
   * recorded with trigger `manual` and ends the delivery either way: a
   * resend is one attempt, not a new retry schedule.
   */
  sendNow(delivery: ClaimedDelivery): void {
    this.start(delivery, 'manual');
  }

  /** Resolves once no attempt of this instance is in flight (the CLI waits for its resend). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()].map((a) => a.done));
  }

  private async attempt(delivery: ClaimedDelivery, signal: AbortSignal, trigger: AttemptTrigger): Promise<void> {
    const secrets = this.secrets.of(delivery);
    const attemptedAt = new Date();
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    // A fresh `t` per attempt over the same stored bytes: retries are byte-identical, signatures are not.
    // Newest secret first in both schemes, so a receiver mid-rotation verifies with either secret.
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'Service-Event': delivery.eventType,
      'Service-Delivery': delivery.id,
      'Service-Signature': signPayloadWithAll(secrets, delivery.payload, timestamp),
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardWebhooksSignature(secrets, delivery.id, timestamp, delivery.payload),
    };
    if (delivery.traceId !== null) headers['traceparent'] = traceparentFor(delivery.traceId);
    const result = await this.sender.send(
      { url: delivery.url, body: delivery.payload, headers },
      {
        timeoutMs: this.config.webhooks.timeoutMs,
        allowedPrivate: this.allowedPrivate,
        allowedPorts: this.config.webhooks.allowedPorts,
        signal,
      },
    );
    if (result.aborted) return;
    const plan =
      trigger === 'manual'
        ? planManualAttempt(result.outcome)
        : planAfterAttempt({
            attemptsBefore: delivery.attempts - delivery.retryFrom,
            outcome: result.outcome,
            retryAfter: result.retryAfter,
            now: new Date(),
            schedule: this.schedule,
          });
    const recorded = await this.recorder.record({
      delivery,
      attemptedAt,
      outcome: result.outcome,
      durationMs: result.durationMs,
      httpStatus: result.httpStatus,
      responseExcerpt: result.responseExcerpt,
      succeeded: plan.succeeded,
      trigger,
      next: { status: plan.status, retryInMs: plan.retryInMs },
    });
    countDeliveryAttempt(result.outcome);
    for (const warning of recorded.warnings) {
      // One line per warning with stable fields, so operators can alert on `webhookWarning`; with the last
      // attempt's outcome, and for a network error what failed (an expired certificate, a refused connection),
      // which the attempt log cannot tell apart.
      this.logger.warn({
        msg: `webhook ${delivery.subscriptionId}: ${warning.kind} (${warning.consecutiveFailures} consecutive failures)`,
        webhookWarning: warning.kind,
        webhookId: delivery.subscriptionId,
        consecutiveFailures: warning.consecutiveFailures,
        deliveryId: delivery.id,
        traceId: delivery.traceId,
        lastOutcome: deliveryOutcomeLabel(result.outcome),
        ...(result.networkError === null ? {} : { networkError: result.networkError }),
      });
    }
    if (!recorded.deliveryUpdated) {
      this.logger.warn(`webhook delivery ${delivery.id} outlived its lease; another attempt may follow`);
    }
  }
}
