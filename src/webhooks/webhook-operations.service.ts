import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { generateWebhookSecret } from '../../libs/webhooks';
import { Page } from '../common/envelope/page';
import { DomainError } from '../common/errors/domain-error';
import { instant as shownInstant } from '../common/html/html-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { afterCommit } from '../database/connection-unavailable';
import { UnitOfWork } from '../database/unit-of-work';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION, WebhookDeliveryWorker } from './delivery/webhook-delivery.worker';
import type {
  RecoverResultDto,
  RotatedWebhookResponseDto,
  WebhookDeliveryResponseDto,
  WebhookDetailResponseDto,
  WebhookResponseDto,
} from './dto/webhook.dto';
import type { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { WebhookSecretCipher } from './secrets/webhook-secret.cipher';
import { DeliveryHistoryRepository, type DeliveryRow } from './delivery-history.repository';
import { outcomeFromText, type AttemptOutcome } from './webhook-event-types';
import { presentWebhook } from './webhook.presenter';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';

/** The internal deliveries list shows this many, newest first. */
const DELIVERIES_SHOWN = 500;
/** Recovery queues at most this many per call (internal-api.md). */
export const MAX_RECOVERED_PER_CALL = 10_000;
export const DEFAULT_GRACE_SECONDS = 86_400;
export const MAX_GRACE_SECONDS = 604_800;
/** Health is computed over this many of the most recent attempts. */
const HEALTH_ATTEMPTS = 100;
const WARNINGS_SHOWN = 100;
const RESEAL_PAGE = 200;
/** A resend's lease outlives its deadline by this much, for the write that records it. */
const LEASE_MARGIN_MS = 5_000;

/**
 * The operations on one subscription that the internal API, the CLI and the
 * dashboard share (internal-api.md "Webhook operations"). Each throws a
 * DomainError for a contract error: `not_found` for an unknown or deleted
 * subscription, `conflict` for an operation its state does not allow,
 * `invalid_argument` for bad input.
 */
@Injectable()
export class WebhookOperationsService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly deliveryRows: DeliveryHistoryRepository,
    private readonly cipher: WebhookSecretCipher,
    private readonly unitOfWork: UnitOfWork,
    private readonly worker: WebhookDeliveryWorker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The Webhook with its account, rotation state, health and warnings. */
  async detail(webhookId: string): Promise<WebhookDetailResponseDto> {
    const row = await this.live(webhookId);
    const [figures, warnings] = await Promise.all([
      this.subscriptions.recentAttemptFigures(webhookId, HEALTH_ATTEMPTS),
      this.subscriptions.warnings(webhookId, WARNINGS_SHOWN),
    ]);
    return {
      ...this.rotated(row),
      accountType: row.principalType,
      accountId: row.principalId,
      createdAt: row.createdAt.toISOString(),
      health: {
        // The row's time may trail by up to ten seconds (see SUCCESS_TIME_GRANULARITY); the attempt log's does not.
        lastSuccessAt: latest(row.lastSuccessAt, figures.lastSuccessAt)?.toISOString() ?? null,
        lastFailureAt: row.lastFailureAt?.toISOString() ?? null,
        successRate: figures.attempts === 0 ? null : Math.round((figures.successes / figures.attempts) * 1e4) / 1e4,
        p50Ms: figures.p50Ms,
        p99Ms: figures.p99Ms,
      },
      warnings: warnings.map((warning) => ({
        at: warning.at.toISOString(),
        kind: warning.kind,
        consecutiveFailures: warning.consecutiveFailures,
      })),
    };
  }

  /**
   * The delivery log, newest first. Deleted subscriptions keep theirs (until retention purges it).
   * `limit` (at most 501: a page and one more) lets a page that shows fewer read fewer; `olderThanId` (one of the
   * subscription's deliveries) gives the page after it.
   */
  async deliveries(
    webhookId: string,
    limit = DELIVERIES_SHOWN,
    olderThanId?: string,
  ): Promise<WebhookDeliveryResponseDto[]> {
    if ((await this.subscriptions.findById(webhookId)) === null) throw DomainError.notFound('Webhook');
    const rows = await this.deliveryRows.listForSubscription(webhookId, Math.min(limit, DELIVERIES_SHOWN + 1), {
      olderThanId,
    });
    return rows.map(presentDelivery);
  }

  /** One delivery of the log, however far back; 404 for one that is not the subscription's. */
  async delivery(webhookId: string, deliveryId: string): Promise<WebhookDeliveryResponseDto> {
    const [row] = await this.deliveryRows.listForSubscription(webhookId, 1, { onlyDeliveryId: deliveryId });
    if (row === undefined) throw DomainError.notFound('Delivery');
    return presentDelivery(row);
  }

  /**
   * A page of the delivery log, newest first: the newest `size` (at most 500), or the `size` before
   * `cursor`, which is the `nextCursor` of the page before (the id of its last delivery). Every
   * delivery a resend may name can be reached this way, from the internal API, the dashboard and
   * the portal alike.
   */
  async deliveryPage(
    webhookId: string,
    options: { cursor?: string; size?: number } = {},
  ): Promise<Page<WebhookDeliveryResponseDto>> {
    const size = Math.min(options.size ?? DELIVERIES_SHOWN, DELIVERIES_SHOWN);
    const rows = await this.deliveries(webhookId, size + 1, options.cursor);
    // A cursor names a delivery of this subscription; any other would read as the end of the log.
    if (
      options.cursor !== undefined &&
      rows.length === 0 &&
      !(await this.deliveryRows.belongsTo(webhookId, options.cursor))
    ) {
      throw DomainError.invalidArgument(
        'cursor names no delivery of this subscription: it must be the one the page before named.',
      );
    }
    const shown = rows.slice(0, size);
    const hasMore = rows.length > size;
    return new Page(shown, hasMore, hasMore ? (shown.at(-1)?.id ?? null) : null);
  }

  /**
   * Re-enables: failures back to 0, whatever waited is sent again. With
   * `recover`, what the subscription missed while disabled (its skipped and
   * failed deliveries since it was disabled) is queued too, as `recover`
   * would, bounded the same way.
   */
  async enable(webhookId: string, options: { recover?: boolean } = {}): Promise<WebhookResponseDto> {
    const enabled = await this.unitOfWork.run((tx) => this.subscriptions.enable(webhookId, tx));
    if (enabled === null) throw DomainError.notFound('Webhook');
    // The enable has committed (and cleared the marks recovery reads): a failure from here on is no 503.
    return afterCommit(async () => {
      if (options.recover === true && enabled.disabledSince !== null) {
        // Skipped deliveries by their queue number too: one whose publication began before the disabling attempt
        // but read the subscription after it is older than disabledSince, and was still missed while it was off.
        // Deleted meanwhile: nothing is queued, and the read below answers 404.
        await this.deliveryRows.requeueWindow(
          webhookId,
          { since: enabled.disabledSince, until: null, skippedAfterSeq: enabled.skippedAfterSeq },
          MAX_RECOVERED_PER_CALL,
          { refuseDisabled: false },
        );
      }
      this.worker.wake();
      return presentWebhook(await this.live(webhookId), this.cipher);
    });
  }

  /**
   * One new attempt of a delivery in a final state: the same id and body
   * bytes, signed now with the current secrets, recorded with trigger
   * `manual`. It never starts a retry schedule. A success clears the
   * subscription's consecutive failures (the endpoint works); a failure is
   * not counted, so an operator's probe never disables a subscription.
   * It is one more attempt in flight, so it is refused (`conflict`) rather
   * than sent past the subscription's cap or beside a failing one's probe:
   * queued for the worker instead, it would be a scheduled attempt with a
   * retry schedule, and on a disabled subscription would wait for the enable.
   */
  async resend(
    webhookId: string,
    deliveryId: string,
    options: { force?: boolean } = {},
  ): Promise<WebhookDeliveryResponseDto> {
    const subscription = await this.live(webhookId);
    if (!subscription.enabled && options.force !== true) {
      // A delivery that is not the subscription's is a 404 whatever its state: a 409 would invite forcing nothing.
      await this.delivery(webhookId, deliveryId);
      throw DomainError.conflict('The webhook is disabled; resend with force to send to it anyway.');
    }
    // Checked again where the lease is taken, under the subscription's lock: a deletion or a disable may have
    // committed since the read above, and a resend must not go out after DELETE answered.
    const leased = await this.deliveryRows.leaseForResend(webhookId, deliveryId, {
      leaseMs: this.config.webhooks.timeoutMs + LEASE_MARGIN_MS,
      leaseToken: randomUUID(),
      force: options.force === true,
      maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    });
    if (leased === null) throw DomainError.notFound('Delivery');
    if (leased === 'deleted') throw DomainError.notFound('Webhook');
    // Refused for the subscription's state: a delivery that is not its own is still a 404 (as above).
    if (leased === 'disabled' || leased === 'busy') await this.delivery(webhookId, deliveryId);
    if (leased === 'disabled') {
      throw DomainError.conflict('The webhook is disabled; resend with force to send to it anyway.');
    }
    if (leased === 'busy') {
      throw DomainError.conflict(
        `The webhook has as many attempts in flight as it may (${MAX_IN_FLIGHT_PER_SUBSCRIPTION}, or one while it ` +
          'is failing or replaying a recovery); resend once they end.',
      );
    }
    if (leased === 'pending') {
      throw DomainError.conflict('The delivery is pending (queued or being attempted); only a final one is resent.');
    }
    // Read before the attempt starts: the answer is the resend as accepted (pending), whatever the attempt
    // does next. Read after, a fast receiver's answer raced it and the resend could already show `succeeded`.
    // Retention could only remove it long after the lease just taken ends.
    // The lease has committed: the attempt is made whatever the read does, and a failure of the read is no 503.
    return afterCommit(async () => {
      try {
        return await this.delivery(webhookId, deliveryId);
      } finally {
        this.worker.sendNow(leased);
      }
    });
  }

  /**
   * Queues again, oldest first, the deliveries created in [since, until)
   * that did not succeed and are not pending; at most 10,000 per call.
   * They are sent one at a time in their original order, each on a fresh
   * retry schedule.
   */
  async recover(webhookId: string, window: { since: Date; until?: Date }): Promise<RecoverResultDto> {
    const since = window.since;
    const until = window.until ?? null;
    if (!(since instanceof Date) || Number.isNaN(since.getTime())) {
      throw DomainError.invalidArgument('since must be an instant (ISO 8601 or epoch milliseconds).');
    }
    if (until !== null && (!(until instanceof Date) || Number.isNaN(until.getTime()))) {
      throw DomainError.invalidArgument('until must be an instant (ISO 8601 or epoch milliseconds).');
    }
    if (until !== null && until.getTime() < since.getTime()) {
      throw DomainError.invalidArgument('until must not be before since.');
    }
    // Checked where the deliveries are queued, under the subscription's lock: a deletion or a disable may commit
    // meanwhile, and nothing may be queued for a subscription after DELETE answered.
    const result = await this.deliveryRows.requeueWindow(webhookId, { since, until }, MAX_RECOVERED_PER_CALL, {
      refuseDisabled: true,
    });
    if (result === 'deleted') throw DomainError.notFound('Webhook');
    if (result === 'disabled') {
      throw DomainError.conflict('The webhook is disabled; enable it (optionally with recover) first.');
    }
    this.worker.wake();
    return result;
  }

  /**
   * A new current secret at once; the replaced one keeps signing for
   * `graceSeconds` (0 to 604800, default 86400), so receivers can switch
   * without a window of failures. A rotation during a grace period ends the
   * older secret's grace at once: at most two secrets sign at a time.
   *
   * `keepEarlierGrace`, the pages' rule unless their box is ticked: refused
   * (400) while the secret replaced by the last rotation still signs, decided
   * in the rotating statement, so that of two forms posted at once the second
   * is refused instead of ending the grace the first began. The internal API
   * and the CLI rotate as the contract says, without asking.
   */
  async rotateSecret(
    webhookId: string,
    options: { graceSeconds?: number; keepEarlierGrace?: boolean } = {},
  ): Promise<RotatedWebhookResponseDto> {
    const grace = options.graceSeconds ?? DEFAULT_GRACE_SECONDS;
    if (!Number.isSafeInteger(grace) || grace < 0 || grace > MAX_GRACE_SECONDS) {
      throw DomainError.invalidArgument(`graceSeconds must be a whole number from 0 to ${MAX_GRACE_SECONDS}.`);
    }
    const rotation = {
      newSecretSealed: this.cipher.seal(webhookId, generateWebhookSecret()),
      graceSeconds: grace,
      mayEndGrace: options.keepEarlierGrace !== true,
    };
    const outcome = await this.unitOfWork.run((tx) => this.subscriptions.rotateSecret(webhookId, rotation, tx));
    if (outcome === null) throw DomainError.notFound('Webhook');
    if ('graceRunsUntil' in outcome) throw earlierGraceRuns(outcome.graceRunsUntil.toISOString());
    return this.rotated(outcome.rotated);
  }

  /**
   * Re-seals every stored secret (current and replaced, deleted
   * subscriptions included) under the current WEBHOOK_SECRET_KEY: after a
   * key rotation, and for secrets stored before a key was set. Secrets sealed
   * under an earlier key open as long as it is listed in
   * WEBHOOK_SECRET_KEY_PREVIOUS.
   */
  async resealSecrets(): Promise<{ checked: number; resealed: number }> {
    if (this.config.webhooks.secretKey === null) {
      throw DomainError.invalidArgument('WEBHOOK_SECRET_KEY is not set: there is no key to seal under.');
    }
    let checked = 0;
    let resealed = 0;
    let after = '';
    for (;;) {
      const page = await this.subscriptions.sealedSecretsAfter(after, RESEAL_PAGE);
      const last = page.at(-1);
      if (last === undefined) break;
      for (const stored of page) {
        checked += 1;
        const previous = stored.previousSecretSealed;
        const stale =
          !this.cipher.isSealedUnderCurrentKey(stored.secretSealed) ||
          (previous !== null && !this.cipher.isSealedUnderCurrentKey(previous));
        if (!stale) continue;
        const reseal = (value: string): string => this.cipher.seal(stored.id, this.cipher.open(stored.id, value));
        const replaced = await this.subscriptions.replaceSealedSecrets(stored, {
          id: stored.id,
          secretSealed: reseal(stored.secretSealed),
          previousSecretSealed: previous === null ? null : reseal(previous),
        });
        if (replaced) resealed += 1;
      }
      after = last.id;
    }
    return { checked, resealed };
  }

  private async live(webhookId: string): Promise<WebhookSubscriptionEntity> {
    const row = await this.subscriptions.findLive(webhookId);
    if (row === null) throw DomainError.notFound('Webhook');
    return row;
  }

  private rotated(row: WebhookSubscriptionEntity): RotatedWebhookResponseDto {
    const graceEnds = row.previousSecretExpiresAt;
    const inGrace = row.previousSecretSealed !== null && graceEnds !== null && graceEnds.getTime() > Date.now();
    return {
      ...presentWebhook(row, this.cipher),
      secretRotation: inGrace ? { previousExpiresAt: graceEnds.toISOString() } : null,
    };
  }
}

/** The refusal of a page's rotation, unconfirmed, while the secret replaced by the last one still signs. */
export function earlierGraceRuns(previousExpiresAt: string): DomainError {
  return DomainError.invalidArgument(
    `The secret replaced by the last rotation still signs until ${shownInstant(previousExpiresAt)}: rotating again stops it at once and every receiver still on it fails. Tick the box to confirm, or rotate after that time.`,
  );
}

function presentDelivery(row: DeliveryRow): WebhookDeliveryResponseDto {
  return {
    id: row.id,
    type: row.eventType,
    status: row.status,
    attempts: row.attempts,
    lastStatus: outcomeFromText(row.lastStatus),
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    traceId: row.traceId,
    attemptLog: row.attemptLog.map((attempt) => ({
      at: attempt.at.toISOString(),
      outcome: outcomeFromText(attempt.outcome) as AttemptOutcome,
      durationMs: attempt.durationMs,
      trigger: attempt.trigger,
      httpStatus: attempt.httpStatus,
      responseExcerpt: attempt.responseExcerpt,
    })),
  };
}

/** The later of two optional times. */
function latest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() >= b.getTime() ? a : b;
}
