import { Inject, Injectable } from '@nestjs/common';
import { newResourceId } from '../../libs/ids/resource-id';
import { checkWebhookUrlResolving, generateWebhookSecret, parseCidrList, type ParsedCidr } from '../../libs/webhooks';
import type { Principal } from '../common/auth-context/access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import type { DeletedWebhookResponseDto, WebhookResponseDto } from './dto/webhook.dto';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { WebhookSecretCipher } from './secrets/webhook-secret.cipher';
import { DeliveryQueueRepository } from './delivery/delivery-queue.repository';
import {
  EVENT_TYPES_FOR_PRINCIPAL,
  isWebhookEventType,
  MAX_DESCRIPTION_LENGTH,
  MAX_SUBSCRIPTIONS_PER_ACCOUNT,
  type SubscriberType,
  type WebhookEventType,
} from './webhook-event-types';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';
import { presentWebhook } from './webhook.presenter';

const MAX_URL_LENGTH = 2048;

function subscriberTypeOf(owner: Principal): SubscriberType {
  // The route admits organiser and venue keys only (@RequireAccess); anything else is a wiring bug.
  if (owner.type !== 'organiser' && owner.type !== 'venue') throw new Error(`${owner.type} cannot own webhooks`);
  return owner.type;
}

/**
 * Webhook subscriptions on the public API: the contract's rules for creating
 * them, the account's limit of ten, deleting. The internal operations live in
 * WebhookOperationsService.
 */
@Injectable()
export class WebhooksService {
  private readonly allowedPrivate: ParsedCidr[];
  private readonly allowedPorts: number[];

  constructor(
    private readonly subscriptions: WebhookSubscriptionRepository,
    private readonly deliveries: DeliveryQueueRepository,
    private readonly cipher: WebhookSecretCipher,
    private readonly unitOfWork: UnitOfWork,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.allowedPrivate = parseCidrList(config.webhooks.allowPrivateCidrs);
    this.allowedPorts = config.webhooks.allowedPorts;
  }

  async list(owner: Principal): Promise<WebhookResponseDto[]> {
    const rows = await this.subscriptions.listForAccount(owner);
    return rows.map((row) => this.toResponse(row));
  }

  async create(owner: Principal, input: Record<string, unknown>): Promise<WebhookResponseDto> {
    const type = subscriberTypeOf(owner);
    const url = await this.validUrl(input.url);
    const events = this.validEvents(type, input.events);
    const description = this.validDescription(input.description);

    const subscription = new WebhookSubscriptionEntity();
    subscription.id = newResourceId('whk');
    subscription.principalType = type;
    subscription.principalId = owner.id;
    subscription.url = url;
    subscription.events = events;
    subscription.secretSealed = this.cipher.seal(subscription.id, generateWebhookSecret());
    // Only the literal boolean disables: 0, "false" and null leave it on.
    subscription.enabled = input.enabled !== false;
    // Created disabled: what it misses from now on is recorded (skipped) and recoverable on enable.
    subscription.disabledAt = subscription.enabled ? null : new Date();
    subscription.description = description;
    subscription.lastStatus = null;
    subscription.consecutiveFailures = 0;

    await this.unitOfWork.run(async (tx) => {
      await this.subscriptions.lockAccount(owner, tx);
      if ((await this.subscriptions.countForAccount(owner, tx)) >= MAX_SUBSCRIPTIONS_PER_ACCOUNT) {
        throw new DomainError(
          ErrorCode.LimitReached,
          `This account already has ${MAX_SUBSCRIPTIONS_PER_ACCOUNT} webhook subscriptions; delete one first.`,
        );
      }
      await this.subscriptions.insert(subscription, tx);
    });
    return this.toResponse(subscription);
  }

  /** Pending deliveries are dropped with it; an attempt already in flight is not recalled. */
  async remove(owner: Principal, webhookId: string | undefined): Promise<DeletedWebhookResponseDto> {
    if (webhookId === undefined || webhookId.trim() === '') {
      throw DomainError.invalidArgument('A webhookId is required in the path: DELETE /v1/webhooks/{webhookId}.');
    }
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.subscriptions.softDelete(owner, webhookId, tx))) throw DomainError.notFound('Webhook');
      await this.deliveries.dropPending(webhookId, tx);
    });
    return { id: webhookId, deleted: true };
  }

  private async validUrl(raw: unknown): Promise<string> {
    if (raw === undefined || raw === null) throw DomainError.invalidArgument('url is required.');
    if (typeof raw === 'string' && raw.length > MAX_URL_LENGTH) {
      throw DomainError.invalidArgument(`url must be at most ${MAX_URL_LENGTH} characters.`);
    }
    // What is stored, shown and delivered to is the normalised form (WHATWG): the limit holds for it too, since
    // percent-encoding can make it several times longer than what was sent. Checked before the name is resolved.
    if (typeof raw === 'string' && URL.canParse(raw) && new URL(raw).href.length > MAX_URL_LENGTH) {
      throw DomainError.invalidArgument(
        `url must be at most ${MAX_URL_LENGTH} characters once normalised (each non-ASCII character of its path or query is percent-encoded, 6 to 12 characters).`,
      );
    }
    // A name is resolved now as well as at every delivery: one that leads into a private network is refused here.
    const check = await checkWebhookUrlResolving(raw, this.allowedPrivate, { allowedPorts: this.allowedPorts });
    // The reason never echoes an address, so the answer cannot be used to map a network.
    if (!check.ok) throw DomainError.invalidArgument(`${check.reason}.`);
    return check.url.href;
  }

  private validEvents(type: SubscriberType, raw: unknown): WebhookEventType[] {
    if (raw === undefined || raw === null) throw DomainError.invalidArgument('events is required.');
    if (!Array.isArray(raw)) throw DomainError.invalidArgument('events must be an array of event types.');
    const known = [...new Set(raw.filter(isWebhookEventType))];
    if (known.length === 0) {
      throw DomainError.invalidArgument(
        `events names no known event type; known: ${EVENT_TYPES_FOR_PRINCIPAL.organiser.join(', ')}.`,
      );
    }
    const allowed: readonly WebhookEventType[] = EVENT_TYPES_FOR_PRINCIPAL[type];
    // Refused, not narrowed: a venue asking for order.confirmed should learn it cannot have it.
    const refused = known.filter((event) => !allowed.includes(event));
    if (refused.length > 0) {
      throw new DomainError(
        ErrorCode.Forbidden,
        `A ${type} key may subscribe to ${allowed.join(', ')} only; refused: ${refused.join(', ')}.`,
      );
    }
    return known;
  }

  private validDescription(raw: unknown): string | null {
    if (raw === undefined || raw === null) return null;
    if (typeof raw !== 'string') throw DomainError.invalidArgument('description must be a string.');
    // Cut by code points so a truncated emoji never leaves half a surrogate pair; trimmed again after the
    // cut, which may end at spaces inside the text.
    const cut = Array.from(raw.trim()).slice(0, MAX_DESCRIPTION_LENGTH).join('').trimEnd();
    return cut === '' ? null : cut;
  }

  private toResponse(row: WebhookSubscriptionEntity): WebhookResponseDto {
    return presentWebhook(row, this.cipher);
  }
}
