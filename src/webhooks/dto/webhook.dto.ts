import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';
import { WEBHOOK_EVENT_TYPES, type AttemptOutcome, type WebhookEventType } from '../webhook-event-types';

/**
 * Body of POST /v1/webhooks. Fields are only allowed through here, not
 * validated: the rules are contract rules with contract answers (unknown
 * event types filtered, a venue refused with 403, only the literal `false`
 * disabling), so WebhooksService applies them.
 */
export class CreateWebhookDto {
  @ApiProperty({ type: String, format: 'uri', description: 'https, on a public host.' })
  @Allow()
  url?: unknown;

  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_TYPES, description: 'Unknown types are filtered out.' })
  @Allow()
  events?: unknown;

  @ApiPropertyOptional({ type: String, maxLength: 200, description: 'Trimmed and truncated to 200 characters.' })
  @Allow()
  description?: unknown;

  @ApiPropertyOptional({ type: Boolean, default: true, description: 'Only the literal false disables.' })
  @Allow()
  enabled?: unknown;
}

export class WebhookResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ format: 'uri' }) url!: string;
  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_TYPES }) events!: WebhookEventType[];
  @ApiProperty({ description: '`whsec_` followed by 64 hex characters. A credential.' }) secret!: string;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({
    oneOf: [{ type: 'integer' }, { type: 'string', enum: ['timeout', 'network_error', 'blocked_host'] }],
    nullable: true,
    description: 'Last delivery outcome.',
  })
  lastStatus!: AttemptOutcome | null;
  @ApiProperty() consecutiveFailures!: number;
}

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

/** Body of POST /internal/webhooks/{id}/enable. Fields are read by WebhookOperationsService. */
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
