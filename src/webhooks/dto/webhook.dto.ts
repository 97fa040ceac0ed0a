import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { pageSchemaOf } from '../../common/openapi/page-schema';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';
import { WEBHOOK_EVENT_TYPES, type AttemptOutcome, type WebhookEventType } from '../webhook-event-types';

@ApiSchema({ name: 'Webhook', description: 'A webhook subscription. `secret` makes it a credential.' })
export class WebhookResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ format: 'uri' }) url!: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType', isArray: true })
  events!: WebhookEventType[];
  @ApiProperty({
    description: '`whsec_` followed by 64 hex characters. A credential.',
    pattern: '^whsec_[0-9a-f]{64}$',
  })
  secret!: string;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({
    oneOf: [
      { type: 'integer', description: 'The HTTP status the receiver answered.' },
      { type: 'string', enum: ['timeout', 'network_error', 'blocked_host'] },
      { type: 'null', description: 'No attempt yet.' },
    ],
    description: 'Last delivery outcome.',
  })
  lastStatus!: AttemptOutcome | null;
  @ApiProperty({ type: 'integer', minimum: 0 }) consecutiveFailures!: number;
}

/** The page envelope around Webhooks, for the OpenAPI document. */
export const WebhookPage = pageSchemaOf(WebhookResponseDto, 'WebhookPage');

@ApiSchema({ name: 'DeletedWebhook' })
export class DeletedWebhookResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: [true] }) deleted!: true;
}

export class WebhookAttemptDto {
  at!: string;
  outcome!: AttemptOutcome;
  durationMs!: number;
  /** `scheduled` (the delivery worker) or `manual` (a resend). */
  trigger!: 'scheduled' | 'manual';
  /** The receiver's HTTP status; null without a response (timeout, network error, blocked host) or before it was recorded. */
  httpStatus!: number | null;
  /** The first KiB of the receiver's response body (invalid UTF-8 replaced); internal only, never on the public API. */
  responseExcerpt!: string | null;
}

/**
 * One delivery on the internal API. internal-api.md names `attempts` both as
 * the count and as "its attempts log (time, outcome, duration)"; one member
 * cannot be both, so `attempts` is the count and `attemptLog` the log.
 */
export class WebhookDeliveryResponseDto {
  id!: string;
  type!: WebhookEventType;
  status!: DeliveryStatus;
  attempts!: number;
  lastStatus!: AttemptOutcome | null;
  nextAttemptAt!: string | null;
  createdAt!: string;
  /** W3C trace id of the request that caused the delivery; every attempt sent it in `traceparent`. */
  traceId!: string | null;
  attemptLog!: WebhookAttemptDto[];
}

/**
 * Body of POST /internal/webhooks/{id}/enable. Its fields, like those of the
 * bodies below, are read by the read* functions of
 * webhook-operation-inputs.ts (here readEnableOptions).
 */
export class EnableWebhookDto {
  @Allow() recover?: unknown;
}

/** Body of POST /internal/webhooks/{id}/deliveries/{deliveryId}/resend. */
export class ResendDeliveryDto {
  @Allow() force?: unknown;
}

/** Body of POST /internal/webhooks/{id}/recover. */
export class RecoverDeliveriesDto {
  @Allow() since?: unknown;
  @Allow() until?: unknown;
}

/** Body of POST /internal/webhooks/{id}/rotate-secret. */
export class RotateSecretDto {
  @Allow() graceSeconds?: unknown;
}

export interface SecretRotationDto {
  /** When the replaced secret stops signing. */
  previousExpiresAt: string;
}

export interface WebhookHealthDto {
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  /** Share of 2xx among recent attempts, 0 to 1. */
  successRate: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface WebhookWarningDto {
  at: string;
  kind: 'failing' | 'disabled' | 'recovered';
  consecutiveFailures: number;
}

/** The Webhook plus `secretRotation` (rotate-secret's answer). */
export interface RotatedWebhookResponseDto extends WebhookResponseDto {
  secretRotation: SecretRotationDto | null;
}

/** GET /internal/webhooks/{id}. */
export interface WebhookDetailResponseDto extends RotatedWebhookResponseDto {
  accountType: 'organiser' | 'venue';
  accountId: string;
  createdAt: string;
  health: WebhookHealthDto;
  warnings: WebhookWarningDto[];
}

export interface RecoverResultDto {
  queued: number;
  remaining: number;
}
