import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import type { Principal } from '../common/auth-context/access';
import { accountOf } from '../common/auth-context/access';
import { sql, type SqlFragment, type SqlParameter } from '../database/sql/sql-fragment';
import { defineStatement } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import type { Transaction } from '../database/unit-of-work';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import type { WebhookWarningKind } from './entities/webhook-warning.entity';
import type { SubscriberType, WebhookEventType } from './webhook-event-types';

/** A subscription that should receive a fact, as the outbox needs it. */
export interface Recipient {
  subscriptionId: string;
  principal: { type: SubscriberType; id: string };
  /** A disabled subscription gets a `skipped` delivery: nothing is lost while it is off. */
  enabled: boolean;
}

export interface WarningRow {
  at: Date;
  kind: WebhookWarningKind;
  consecutiveFailures: number;
}

export interface HealthFigures {
  attempts: number;
  successes: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** The latest successful attempt among them. */
  lastSuccessAt: Date | null;
}

/** Secrets as stored, for re-sealing under the current key. */
export interface SealedSecrets {
  id: string;
  secretSealed: string;
  previousSecretSealed: string | null;
}

interface RecipientRow {
  id: string;
  principal_type: SubscriberType;
  principal_id: string;
  enabled: boolean;
}

/**
 * The subscriptions a fact goes to, oldest first; `whose` names their owners.
 * Read FOR KEY SHARE (the lock each delivery's foreign key takes on its
 * subscription anyway), held until the publishing transaction ends: enabling
 * or deleting a subscription locks its row FOR UPDATE, which waits for every
 * publishing transaction that has read it. Without it, a fact read as
 * "disabled" could commit its skipped delivery after a re-enable's recovery
 * had looked, and a fact read as "live" its pending one after a delete had
 * dropped the queue: left skipped, or pending for a deleted subscription.
 */
function recipientsOf(eventType: SqlParameter, whose: SqlFragment): SqlFragment {
  return sql`SELECT s.id, s.principal_type, s.principal_id, s.enabled
       FROM webhook_subscription s
      WHERE s.deleted_at IS NULL AND ${eventType} = ANY (s.events) AND (${whose})
      ORDER BY s.created_at, s.id
        FOR KEY SHARE OF s`;
}

/** Prepared, like the next: every fact reads its recipients. */
const ORDER_CONFIRMED_RECIPIENTS = defineStatement<{ eventType: WebhookEventType; organizerId: string }, RecipientRow>(
  (p) => recipientsOf(p.eventType, sql`s.principal_type = 'organiser' AND s.principal_id = ${p.organizerId}`),
  { prepared: true },
);
const EVENT_PUBLISHED_RECIPIENTS = defineStatement<
  { eventType: WebhookEventType; organizerId: string | null; venueIds: string[] },
  RecipientRow
>(
  (p) =>
    recipientsOf(
      p.eventType,
      sql`(s.principal_type = 'organiser' AND s.principal_id = ${p.organizerId})
    OR (s.principal_type = 'venue' AND s.principal_id = ANY (${p.venueIds}::text[]))`,
    ),
  { prepared: true },
);

/** Serialises one account's subscription writes until the transaction ends (see lockAccount). */
const LOCK_ACCOUNT = defineStatement<{ account: string }>(
  (p) => sql`SELECT pg_advisory_xact_lock(hashtext('webhook_subscription'), hashtext(${p.account}))`,
  { prepared: false },
);

const COUNT_FOR_ACCOUNT = defineStatement<{ principalType: string; principalId: string }, { n: number }>(
  (p) => sql`SELECT count(*)::int AS n FROM webhook_subscription
        WHERE principal_type = ${p.principalType} AND principal_id = ${p.principalId} AND deleted_at IS NULL`,
  { prepared: false },
);

/** FOR UPDATE first: it waits for the facts being published to it (see recipientsOf), so their queue is dropped too. */
const SOFT_DELETE = defineStatement<{ subscriptionId: string; principalType: string; principalId: string }>(
  (p) => sql`UPDATE webhook_subscription s SET deleted_at = now(), enabled = false, updated_at = now()
        FROM (SELECT id FROM webhook_subscription
               WHERE id = ${p.subscriptionId} AND principal_type = ${p.principalType}
                 AND principal_id = ${p.principalId} AND deleted_at IS NULL
                 FOR UPDATE) live
       WHERE s.id = live.id`,
  { prepared: false },
);

/**
 * A subscription created disabled skips from its creation on: its mark in the
 * queue's numbering is drawn before it commits, so every delivery skipped for
 * it (by a publication that reads it once committed, however early that
 * publication's transaction began) is numbered above it, as for one the
 * worker disabled (RECORD_ATTEMPT's disabled_seq).
 */
const MARK_CREATED_DISABLED = defineStatement<{ subscriptionId: string }>(
  (p) =>
    sql`UPDATE webhook_subscription SET disabled_seq = nextval('webhook_delivery_seq') WHERE id = ${p.subscriptionId}`,
  { prepared: false },
);

/**
 * Re-enables a live subscription, returning since when it was disabled (null
 * if it was enabled) and the queue number above which every delivery skipped
 * since then is numbered (`skipped_after_seq`: the mark drawn when it was
 * disabled, by the worker or at its creation; 0 when no time of disabling was
 * kept either; null for one disabled by a build that kept no mark); its turn in the claims, parked while it was off, comes back at once
 * (unconditionally: a claim parking it while this waited for the
 * subscription's row is then overwritten, not missed). The row is locked FOR
 * UPDATE, which waits for the facts being published to it (see
 * recipientsOf): the recovery that follows sees their skipped deliveries.
 */
const ENABLE = defineStatement<
  { subscriptionId: string },
  { disabled_since: Date | null; skipped_after_seq: string | null }
>(
  (p) => sql`WITH enabled AS (
      UPDATE webhook_subscription s
         SET enabled = true, consecutive_failures = 0, disabled_at = NULL, disabled_seq = NULL, updated_at = now()
        FROM (SELECT id, CASE WHEN enabled THEN NULL ELSE coalesce(disabled_at, created_at) END AS disabled_since,
                     CASE WHEN enabled THEN NULL WHEN disabled_at IS NULL THEN 0 ELSE disabled_seq END
                       AS skipped_after_seq
                FROM webhook_subscription WHERE id = ${p.subscriptionId} AND deleted_at IS NULL
                 FOR UPDATE) before
       WHERE s.id = before.id
      RETURNING before.disabled_since, before.skipped_after_seq
    ), turn AS (
      UPDATE webhook_delivery_turn SET turn_at = now(), idle = false
       WHERE subscription_id = ${p.subscriptionId} AND EXISTS (SELECT 1 FROM enabled)
    )
    SELECT disabled_since, skipped_after_seq::text FROM enabled`,
  { prepared: false },
);

/**
 * With `mayEndGrace` false, a secret replaced by an earlier rotation that still signs refuses the
 * rotation: checked in the update itself, so of two such rotations at once the second, which waits for
 * the first's row lock, finds the grace the first began and changes nothing.
 */
const ROTATE_SECRET = defineStatement<{
  subscriptionId: string;
  newSecretSealed: string;
  graceSeconds: number;
  mayEndGrace: boolean;
}>(
  (p) => sql`UPDATE webhook_subscription
          SET previous_secret_sealed = CASE WHEN ${p.graceSeconds} > 0 THEN secret_sealed END,
              previous_secret_expires_at = CASE WHEN ${p.graceSeconds} > 0
                                                THEN now() + ${p.graceSeconds} * interval '1 second' END,
              secret_sealed = ${p.newSecretSealed},
              updated_at = now()
        WHERE id = ${p.subscriptionId} AND deleted_at IS NULL
          AND (${p.mayEndGrace} OR previous_secret_sealed IS NULL OR previous_secret_expires_at IS NULL
               OR previous_secret_expires_at <= now())`,
  { prepared: false },
);

const WARNINGS_OF = defineStatement<
  { subscriptionId: string; limit: number },
  { at: Date; kind: WebhookWarningKind; consecutive_failures: number }
>(
  (p) => sql`SELECT at, kind, consecutive_failures FROM webhook_warning
          WHERE subscription_id = ${p.subscriptionId} ORDER BY id DESC LIMIT ${p.limit}`,
  { prepared: false },
);

/**
 * A disabled subscription's recent deliveries are skipped ones, and a busy one's newest queued ones are
 * not tried yet, both without attempts: its health looks past up to this many rows per attempt wanted,
 * so that the attempts that made its state still show.
 */
const SKIPPED_SCAN_FACTOR = 10;

/**
 * Health over the subscription's newest attempts (see recentAttemptFigures). They are made on the
 * deliveries that finished last (the newest of the history) and on those being tried now: at the
 * head of the queue, where a backlog is worked through oldest first and a failing subscription's
 * probe waits, or at its tail when nothing waits. So each of the three places gives up to
 * `attempts` deliveries that were attempted, looked for among `scanned` of its rows (skipped
 * deliveries, made while it was disabled, and queued ones not yet tried are passed over), and the
 * newest `attempts` attempts of those count: the read stays bounded however long the history or
 * the backlog is.
 */
const RECENT_ATTEMPT_FIGURES = defineStatement<
  { subscriptionId: string; attempts: number; scanned: number },
  { n: number; ok: number; p50: number | null; p99: number | null; last_success_at: Date | null }
>(
  (p) => sql`WITH attempted AS (
           (SELECT id FROM (SELECT id, seq, status FROM webhook_delivery_history
                             WHERE subscription_id = ${p.subscriptionId}
                             ORDER BY seq DESC LIMIT ${p.scanned}) AS finished
             WHERE status <> 'skipped'
             ORDER BY seq DESC LIMIT ${p.attempts})
           UNION
           (SELECT id FROM (SELECT id, seq, attempts FROM webhook_delivery
                             WHERE subscription_id = ${p.subscriptionId} AND status = 'pending'
                             ORDER BY seq LIMIT ${p.scanned}) AS head
             WHERE attempts > 0
             ORDER BY seq LIMIT ${p.attempts})
           UNION
           (SELECT id FROM (SELECT id, seq, attempts FROM webhook_delivery
                             WHERE subscription_id = ${p.subscriptionId} AND status = 'pending'
                             ORDER BY seq DESC LIMIT ${p.scanned}) AS tail
             WHERE attempts > 0
             ORDER BY seq DESC LIMIT ${p.attempts})
         ), recent AS (
           SELECT a.outcome ~ '^2[0-9][0-9]$' AS succeeded, a.duration_ms, a.attempted_at
             FROM attempted d
             JOIN webhook_delivery_attempt a ON a.delivery_id = d.id
            ORDER BY a.id DESC
            LIMIT ${p.attempts}
         )
         SELECT count(*)::int AS n,
                count(*) FILTER (WHERE succeeded)::int AS ok,
                percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
                percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99,
                max(attempted_at) FILTER (WHERE succeeded) AS last_success_at
           FROM recent`,
  { prepared: false },
);

const SEALED_SECRETS_AFTER = defineStatement<
  { afterId: string; limit: number },
  { id: string; secret_sealed: string; previous_secret_sealed: string | null }
>(
  (p) => sql`SELECT id, secret_sealed, previous_secret_sealed FROM webhook_subscription
          WHERE id > ${p.afterId} ORDER BY id LIMIT ${p.limit}`,
  { prepared: false },
);

/** Every key id a stored secret (current or previous) is sealed under, with how many secrets each seals. */
const SEALING_KEY_IDS = defineStatement<Record<string, never>, { key_id: string; secrets: number }>(
  () => sql`SELECT split_part(sealed, '.', 2) AS key_id, count(*)::int AS secrets
          FROM (SELECT secret_sealed AS sealed FROM webhook_subscription WHERE deleted_at IS NULL
                UNION ALL
                SELECT previous_secret_sealed FROM webhook_subscription
                 WHERE deleted_at IS NULL AND previous_secret_sealed IS NOT NULL) s
         WHERE sealed LIKE 'aes256gcm.%'
         GROUP BY 1`,
  { prepared: false },
);

/** Compare-and-set of the stored secrets (see replaceSealedSecrets). */
const REPLACE_SEALED_SECRETS = defineStatement<{
  id: string;
  secretSealedBefore: string;
  previousSecretSealedBefore: string | null;
  secretSealed: string;
  previousSecretSealed: string | null;
}>(
  (p) => sql`UPDATE webhook_subscription
          SET secret_sealed = ${p.secretSealed}, previous_secret_sealed = ${p.previousSecretSealed}
        WHERE id = ${p.id} AND secret_sealed = ${p.secretSealedBefore}
          AND previous_secret_sealed IS NOT DISTINCT FROM ${p.previousSecretSealedBefore}`,
  { prepared: false },
);

const PURGE_DELETED = defineStatement<{ days: number; batch: number }>(
  (p) => sql`DELETE FROM webhook_subscription
        WHERE id IN (SELECT s.id FROM webhook_subscription s
                      WHERE s.deleted_at < now() - ${p.days} * interval '1 day'
                        AND NOT EXISTS (SELECT 1 FROM webhook_delivery d
                                         WHERE d.subscription_id = s.id AND d.status = 'pending')
                      ORDER BY s.deleted_at
                      LIMIT ${p.batch}
                      FOR UPDATE SKIP LOCKED)`,
  { prepared: false },
);

const PURGE_WARNINGS = defineStatement<{ days: number; batch: number }>(
  (p) => sql`DELETE FROM webhook_warning
        WHERE id IN (SELECT id FROM webhook_warning WHERE at < now() - ${p.days} * interval '1 day'
                      ORDER BY at LIMIT ${p.batch})`,
  { prepared: false },
);

/**
 * Subscriptions, always scoped by their owner (the account) except where the
 * internal API and the outbox address them by id or by fact. Deleted rows
 * stay (deleted_at) for the deliveries that reference them, and are invisible
 * to every owner-scoped read.
 */
@Injectable()
export class WebhookSubscriptionRepository {
  constructor(
    @InjectRepository(WebhookSubscriptionEntity) private readonly subscriptions: Repository<WebhookSubscriptionEntity>,
    private readonly database: Database,
  ) {}

  /** The key ids live secrets are sealed under, each with its count of secrets. */
  async sealingKeyIds(): Promise<Array<{ keyId: string; secrets: number }>> {
    const rows = await SEALING_KEY_IDS.rows({}, this.database);
    return rows.map((row) => ({ keyId: row.key_id, secrets: row.secrets }));
  }

  async listForAccount(owner: Principal): Promise<WebhookSubscriptionEntity[]> {
    return this.subscriptions.find({
      where: { principalType: owner.type as SubscriberType, principalId: owner.id, deletedAt: IsNull() },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /**
   * Serialises subscription writes of one account until the transaction ends,
   * so ten concurrent creates cannot all see nine rows and all insert.
   */
  async lockAccount(owner: Principal, tx: Transaction): Promise<void> {
    await LOCK_ACCOUNT.rows({ account: accountOf(owner) }, tx);
  }

  async countForAccount(owner: Principal, tx: Transaction): Promise<number> {
    const row = await COUNT_FOR_ACCOUNT.one({ principalType: owner.type, principalId: owner.id }, tx);
    return row?.n ?? 0;
  }

  async insert(subscription: WebhookSubscriptionEntity, tx: Transaction): Promise<void> {
    await tx.manager.insert(WebhookSubscriptionEntity, subscription);
    if (!subscription.enabled) await MARK_CREATED_DISABLED.affected({ subscriptionId: subscription.id }, tx);
  }

  /** Marks the subscription deleted; false when the account has no such live subscription. */
  async softDelete(owner: Principal, subscriptionId: string, tx: Transaction): Promise<boolean> {
    return (await SOFT_DELETE.affected({ subscriptionId, principalType: owner.type, principalId: owner.id }, tx)) > 0;
  }

  /** Includes deleted rows: the internal API can still show what was delivered for them. */
  async findById(subscriptionId: string): Promise<WebhookSubscriptionEntity | null> {
    return this.subscriptions.findOne({ where: { id: subscriptionId } });
  }

  /** A live (not deleted) subscription, or null. */
  async findLive(subscriptionId: string): Promise<WebhookSubscriptionEntity | null> {
    return this.subscriptions.findOne({ where: { id: subscriptionId, deletedAt: IsNull() } });
  }

  /**
   * Re-enables a live subscription and clears its failure count. Returns
   * when it had been disabled (null if it was enabled) and the queue number
   * every delivery skipped since is above (see ENABLE), for recovery; null
   * as a whole when unknown or deleted.
   */
  async enable(
    subscriptionId: string,
    tx: Transaction,
  ): Promise<{ disabledSince: Date | null; skippedAfterSeq: string | null } | null> {
    const row = await ENABLE.one({ subscriptionId }, tx);
    return row === null ? null : { disabledSince: row.disabled_since, skippedAfterSeq: row.skipped_after_seq };
  }

  /**
   * A new current secret; the old one signs too until `graceSeconds` from
   * now (none with 0). A secret still in an earlier grace period stops
   * signing at once (at most two secrets sign at a time), or, with
   * `mayEndGrace` false, the rotation is refused and says until when that
   * secret signs. The row is read back in the rotating transaction, under
   * the update's lock: a rotation made at the same moment cannot slip in
   * between, so each caller gets the secrets its own rotation left. Null: no
   * such live subscription.
   */
  async rotateSecret(
    subscriptionId: string,
    rotation: { newSecretSealed: string; graceSeconds: number; mayEndGrace: boolean },
    tx: Transaction,
  ): Promise<{ rotated: WebhookSubscriptionEntity } | { graceRunsUntil: Date } | null> {
    const changed = await ROTATE_SECRET.affected({ subscriptionId, ...rotation }, tx);
    const row = await tx.manager.findOne(WebhookSubscriptionEntity, { where: { id: subscriptionId } });
    if (row === null || row.deletedAt !== null) return null;
    if (changed === 1) return { rotated: row };
    // Live and unchanged: only a running grace refuses a rotation.
    return { graceRunsUntil: row.previousSecretExpiresAt ?? new Date() };
  }

  /** Newest first. */
  async warnings(subscriptionId: string, limit: number): Promise<WarningRow[]> {
    const rows = await WARNINGS_OF.rows({ subscriptionId, limit }, this.database);
    return rows.map((row) => ({ at: row.at, kind: row.kind, consecutiveFailures: row.consecutive_failures }));
  }

  /**
   * Success rate and response times over the subscription's most recent
   * attempts, however many deliveries wait behind them: those of the
   * deliveries it finished last and of those it is trying now, each looked
   * for among `SKIPPED_SCAN_FACTOR` × `attempts` rows.
   */
  async recentAttemptFigures(subscriptionId: string, attempts: number): Promise<HealthFigures> {
    const scanned = attempts * SKIPPED_SCAN_FACTOR;
    const row = await RECENT_ATTEMPT_FIGURES.one({ subscriptionId, attempts, scanned }, this.database);
    return {
      attempts: row?.n ?? 0,
      successes: row?.ok ?? 0,
      p50Ms: row?.p50 ?? null,
      p99Ms: row?.p99 ?? null,
      lastSuccessAt: row?.last_success_at ?? null,
    };
  }

  /** Every subscription's stored secrets (deleted ones too), a page at a time by id. */
  async sealedSecretsAfter(afterId: string, limit: number): Promise<SealedSecrets[]> {
    const rows = await SEALED_SECRETS_AFTER.rows({ afterId, limit }, this.database);
    return rows.map((row) => ({
      id: row.id,
      secretSealed: row.secret_sealed,
      previousSecretSealed: row.previous_secret_sealed,
    }));
  }

  /** Replaces the stored secrets only if they are still what was read (a rotation in between wins). */
  async replaceSealedSecrets(before: SealedSecrets, after: SealedSecrets): Promise<boolean> {
    const replaced = await REPLACE_SEALED_SECRETS.affected(
      {
        id: before.id,
        secretSealedBefore: before.secretSealed,
        previousSecretSealedBefore: before.previousSecretSealed,
        secretSealed: after.secretSealed,
        previousSecretSealed: after.previousSecretSealed,
      },
      this.database,
    );
    return replaced > 0;
  }

  /**
   * Retention of deleted subscriptions: gone for good `days` after deletion
   * once nothing of theirs is pending (their remaining deliveries, attempts
   * and warnings go with them). One small batch per call.
   */
  async purgeDeleted(days: number, batch: number): Promise<number> {
    return PURGE_DELETED.affected({ days, batch }, this.database);
  }

  /** Warnings older than the retention period, one small batch per call. */
  async purgeWarnings(days: number, batch: number): Promise<number> {
    return PURGE_WARNINGS.affected({ days, batch }, this.database);
  }

  /**
   * `order.confirmed` goes to the owning organiser's live subscriptions
   * that asked for it (disabled ones record it as skipped); never to a
   * venue's. Read in the publishing transaction.
   */
  async findOrderConfirmedRecipients(organizerId: string, tx: Transaction): Promise<Recipient[]> {
    const rows = await ORDER_CONFIRMED_RECIPIENTS.rows({ eventType: 'order.confirmed', organizerId }, tx);
    return rows.map(recipient);
  }

  /**
   * `event.published` goes to the organiser's subscriptions and to those of
   * every venue at whose address the event takes place: a venue owning the
   * event's `location_id` (internal-api.md), the rule GET /v1/events uses.
   * Events names those venues on the domain event, so no join crosses contexts.
   */
  async findEventPublishedRecipients(
    organizerId: string | null,
    venueIds: readonly string[],
    tx: Transaction,
  ): Promise<Recipient[]> {
    const rows = await EVENT_PUBLISHED_RECIPIENTS.rows(
      { eventType: 'event.published', organizerId, venueIds: [...venueIds] },
      tx,
    );
    return rows.map(recipient);
  }
}

function recipient(row: RecipientRow): Recipient {
  return {
    subscriptionId: row.id,
    principal: { type: row.principal_type, id: row.principal_id },
    enabled: row.enabled,
  };
}
