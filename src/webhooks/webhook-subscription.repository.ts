import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Repository } from 'typeorm';
import type { Principal } from '../common/auth-context/access';
import { accountOf } from '../common/auth-context/access';
import { preparedStatement, type PreparedStatement } from '../common/persistence/prepared-statement';
import { SqlStatements } from '../common/persistence/sql-statements';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { returningRows } from './returning-rows';
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

/** The subscriptions a fact goes to, oldest first; `whose` names their owners ($2, $3). Prepared: every fact reads them. */
function recipientsStatement(whose: string): PreparedStatement {
  return preparedStatement(
    `SELECT s.id, s.principal_type, s.principal_id, s.enabled
       FROM webhook_subscription s
      WHERE s.deleted_at IS NULL AND $1 = ANY (s.events) AND (${whose})
      ORDER BY s.created_at, s.id`,
  );
}

const ORDER_CONFIRMED_RECIPIENTS = recipientsStatement(`s.principal_type = 'organiser' AND s.principal_id = $2`);
const EVENT_PUBLISHED_RECIPIENTS = recipientsStatement(
  `(s.principal_type = 'organiser' AND s.principal_id = $2)
    OR (s.principal_type = 'venue' AND s.principal_id = ANY ($3::text[]))`,
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
    private readonly statements: SqlStatements,
  ) {}

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
  async lockAccount(owner: Principal, manager: EntityManager): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('webhook_subscription'), hashtext($1))`, [
      accountOf(owner),
    ]);
  }

  async countForAccount(owner: Principal, manager: EntityManager): Promise<number> {
    const rows: Array<{ n: number }> = await manager.query(
      `SELECT count(*)::int AS n FROM webhook_subscription
        WHERE principal_type = $1 AND principal_id = $2 AND deleted_at IS NULL`,
      [owner.type, owner.id],
    );
    return rows[0]?.n ?? 0;
  }

  async insert(subscription: WebhookSubscriptionEntity, manager: EntityManager): Promise<void> {
    await manager.insert(WebhookSubscriptionEntity, subscription);
  }

  /** Marks the subscription deleted; false when the account has no such live subscription. */
  async softDelete(owner: Principal, subscriptionId: string, manager: EntityManager): Promise<boolean> {
    const rows = await returningRows<{ id: string }>(
      manager,
      `UPDATE webhook_subscription SET deleted_at = now(), enabled = false, updated_at = now()
        WHERE id = $1 AND principal_type = $2 AND principal_id = $3 AND deleted_at IS NULL
        RETURNING id`,
      [subscriptionId, owner.type, owner.id],
    );
    return rows.length > 0;
  }

  /** Includes deleted rows: the internal API can still show what was delivered for them. */
  async findById(subscriptionId: string): Promise<WebhookSubscriptionEntity | null> {
    return this.subscriptions.findOne({ where: { id: subscriptionId } });
  }

  /** A live (not deleted) subscription, or null. */
  async findLive(subscriptionId: string, manager?: EntityManager): Promise<WebhookSubscriptionEntity | null> {
    return (manager ?? this.subscriptions.manager).findOne(WebhookSubscriptionEntity, {
      where: { id: subscriptionId, deletedAt: IsNull() },
    });
  }

  /**
   * Re-enables a live subscription and clears its failure count. Returns
   * when it had been disabled (null if it was enabled), for recovery; null
   * as a whole when unknown or deleted.
   */
  async enable(subscriptionId: string, manager: EntityManager): Promise<{ disabledSince: Date | null } | null> {
    const rows = await returningRows<{ disabled_since: Date | null }>(
      manager,
      `UPDATE webhook_subscription s
          SET enabled = true, consecutive_failures = 0, disabled_at = NULL, updated_at = now()
         FROM (SELECT id, CASE WHEN enabled THEN NULL ELSE coalesce(disabled_at, created_at) END AS disabled_since
                 FROM webhook_subscription WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE) before
        WHERE s.id = before.id
       RETURNING before.disabled_since`,
      [subscriptionId],
    );
    const [row] = rows;
    return row === undefined ? null : { disabledSince: row.disabled_since };
  }

  /**
   * A new current secret; the old one signs too until `graceSeconds` from
   * now (none with 0). A secret still in an earlier grace period stops
   * signing at once: at most two secrets sign at a time.
   */
  async rotateSecret(
    subscriptionId: string,
    newSecretSealed: string,
    graceSeconds: number,
  ): Promise<WebhookSubscriptionEntity | null> {
    const rows = await returningRows<{ id: string }>(
      this.subscriptions.manager,
      `UPDATE webhook_subscription
          SET previous_secret_sealed = CASE WHEN $3 > 0 THEN secret_sealed END,
              previous_secret_expires_at = CASE WHEN $3 > 0 THEN now() + $3 * interval '1 second' END,
              secret_sealed = $2,
              updated_at = now()
        WHERE id = $1 AND deleted_at IS NULL
       RETURNING id`,
      [subscriptionId, newSecretSealed, graceSeconds],
    );
    return rows.length === 0 ? null : this.findById(subscriptionId);
  }

  /** Newest first. */
  async warnings(subscriptionId: string, limit: number): Promise<WarningRow[]> {
    const rows: Array<{ at: Date; kind: WebhookWarningKind; consecutive_failures: number }> =
      await this.subscriptions.query(
        `SELECT at, kind, consecutive_failures FROM webhook_warning
          WHERE subscription_id = $1 ORDER BY id DESC LIMIT $2`,
        [subscriptionId, limit],
      );
    return rows.map((row) => ({ at: row.at, kind: row.kind, consecutiveFailures: row.consecutive_failures }));
  }

  /**
   * Success rate and response times over the subscription's most recent
   * attempts (those of its newest deliveries, so the read stays bounded
   * however long the history is).
   */
  async recentAttemptFigures(subscriptionId: string, attempts: number): Promise<HealthFigures> {
    const rows: Array<{
      n: number;
      ok: number;
      p50: number | null;
      p99: number | null;
      last_success_at: Date | null;
    }> = await this.subscriptions.query(
      `WITH recent AS (
           SELECT a.outcome ~ '^2[0-9][0-9]$' AS succeeded, a.duration_ms, a.attempted_at
             FROM (SELECT id FROM webhook_delivery WHERE subscription_id = $1 ORDER BY seq DESC LIMIT $2) d
             JOIN webhook_delivery_attempt a ON a.delivery_id = d.id
            ORDER BY a.id DESC
            LIMIT $2
         )
         SELECT count(*)::int AS n,
                count(*) FILTER (WHERE succeeded)::int AS ok,
                percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
                percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99,
                max(attempted_at) FILTER (WHERE succeeded) AS last_success_at
           FROM recent`,
      [subscriptionId, attempts],
    );
    const row = rows[0];
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
    const rows: Array<{ id: string; secret_sealed: string; previous_secret_sealed: string | null }> =
      await this.subscriptions.query(
        `SELECT id, secret_sealed, previous_secret_sealed FROM webhook_subscription
          WHERE id > $1 ORDER BY id LIMIT $2`,
        [afterId, limit],
      );
    return rows.map((row) => ({
      id: row.id,
      secretSealed: row.secret_sealed,
      previousSecretSealed: row.previous_secret_sealed,
    }));
  }

  /** Replaces the stored secrets only if they are still what was read (a rotation in between wins). */
  async replaceSealedSecrets(before: SealedSecrets, after: SealedSecrets): Promise<boolean> {
    const rows = await returningRows<{ id: string }>(
      this.subscriptions.manager,
      `UPDATE webhook_subscription SET secret_sealed = $4, previous_secret_sealed = $5
        WHERE id = $1 AND secret_sealed = $2 AND previous_secret_sealed IS NOT DISTINCT FROM $3
       RETURNING id`,
      [before.id, before.secretSealed, before.previousSecretSealed, after.secretSealed, after.previousSecretSealed],
    );
    return rows.length > 0;
  }

  /**
   * Retention of deleted subscriptions: gone for good `days` after deletion
   * once nothing of theirs is pending (their remaining deliveries, attempts
   * and warnings go with them). One small batch per call.
   */
  async purgeDeleted(days: number, batch: number): Promise<number> {
    const rows = await returningRows<{ id: string }>(
      this.subscriptions.manager,
      `DELETE FROM webhook_subscription
        WHERE id IN (SELECT s.id FROM webhook_subscription s
                      WHERE s.deleted_at < now() - $1 * interval '1 day'
                        AND NOT EXISTS (SELECT 1 FROM webhook_delivery d
                                         WHERE d.subscription_id = s.id AND d.status = 'pending')
                      ORDER BY s.deleted_at
                      LIMIT $2
                      FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [days, batch],
    );
    return rows.length;
  }

  /** Warnings older than the retention period, one small batch per call. */
  async purgeWarnings(days: number, batch: number): Promise<number> {
    const rows = await returningRows<{ id: string }>(
      this.subscriptions.manager,
      `DELETE FROM webhook_warning
        WHERE id IN (SELECT id FROM webhook_warning WHERE at < now() - $1 * interval '1 day' ORDER BY at LIMIT $2)
       RETURNING id`,
      [days, batch],
    );
    return rows.length;
  }

  /**
   * `order.confirmed` goes to the owning organiser's live subscriptions
   * that asked for it (disabled ones record it as skipped); never to a venue's. Read with the
   * publishing transaction's manager.
   */
  async findOrderConfirmedRecipients(organizerId: string, manager: EntityManager): Promise<Recipient[]> {
    return this.recipients(manager, ORDER_CONFIRMED_RECIPIENTS, [
      'order.confirmed' satisfies WebhookEventType,
      organizerId,
    ]);
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
    manager: EntityManager,
  ): Promise<Recipient[]> {
    return this.recipients(manager, EVENT_PUBLISHED_RECIPIENTS, [
      'event.published' satisfies WebhookEventType,
      organizerId,
      [...venueIds],
    ]);
  }

  private async recipients(
    manager: EntityManager,
    statement: PreparedStatement,
    parameters: unknown[],
  ): Promise<Recipient[]> {
    const rows = await this.statements.rows<{
      id: string;
      principal_type: SubscriberType;
      principal_id: string;
      enabled: boolean;
    }>(statement, parameters, manager);
    return rows.map((row) => ({
      subscriptionId: row.id,
      principal: { type: row.principal_type, id: row.principal_id },
      enabled: row.enabled,
    }));
  }
}
