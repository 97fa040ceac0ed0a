import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Repository } from 'typeorm';
import type { Principal } from '../common/auth-context/access';
import { accountOf } from '../common/auth-context/access';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { returningRows } from './returning-rows';
import type { SubscriberType, WebhookEventType } from './webhook-event-types';

/** A subscription that should receive a fact, as the outbox needs it. */
export interface Recipient {
  subscriptionId: string;
  principal: { type: SubscriberType; id: string };
}

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

  /** Re-enables a live subscription and clears its failure count; null when unknown or deleted. */
  async enable(subscriptionId: string): Promise<WebhookSubscriptionEntity | null> {
    const result = await this.subscriptions
      .createQueryBuilder()
      .update()
      .set({ enabled: true, consecutiveFailures: 0, updatedAt: () => 'now()' })
      .where('id = :subscriptionId AND deleted_at IS NULL', { subscriptionId })
      .execute();
    if ((result.affected ?? 0) === 0) return null;
    return this.findById(subscriptionId);
  }

  /**
   * `order.confirmed` goes to the owning organiser's enabled, live
   * subscriptions that asked for it; never to a venue's. Read with the
   * publishing transaction's manager.
   */
  async findOrderConfirmedRecipients(organizerId: string, manager: EntityManager): Promise<Recipient[]> {
    return this.recipients(manager, `s.principal_type = 'organiser' AND s.principal_id = $2`, [
      'order.confirmed' satisfies WebhookEventType,
      organizerId,
    ]);
  }

  /**
   * `event.published` goes to the organiser's subscriptions and to those of
   * every venue at whose address the event takes place: a venue owning the
   * event's `location_id` (internal-api.md), the rule GET /v1/events uses.
   */
  async findEventPublishedRecipients(
    eventId: string,
    organizerId: string | null,
    manager: EntityManager,
  ): Promise<Recipient[]> {
    return this.recipients(
      manager,
      `(s.principal_type = 'organiser' AND s.principal_id = $2)
        OR (s.principal_type = 'venue' AND s.principal_id IN (
              SELECT l.venue_id FROM event e JOIN venue_location l ON l.id = e.location_id WHERE e.id = $3))`,
      ['event.published' satisfies WebhookEventType, organizerId, eventId],
    );
  }

  private async recipients(manager: EntityManager, whose: string, parameters: unknown[]): Promise<Recipient[]> {
    const rows: Array<{ id: string; principal_type: SubscriberType; principal_id: string }> = await manager.query(
      `SELECT s.id, s.principal_type, s.principal_id
         FROM webhook_subscription s
        WHERE s.enabled AND s.deleted_at IS NULL AND $1 = ANY (s.events) AND (${whose})
        ORDER BY s.created_at, s.id`,
      parameters,
    );
    return rows.map((row) => ({
      subscriptionId: row.id,
      principal: { type: row.principal_type, id: row.principal_id },
    }));
  }
}
