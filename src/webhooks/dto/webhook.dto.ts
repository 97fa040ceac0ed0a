import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { pageSchemaOf } from '../../common/openapi/page-schema';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';
import { WEBHOOK_EVENT_TYPES, type AttemptOutcome, type WebhookEventType } from '../webhook-event-types';

/** An attempt's outcome: the receiver's HTTP status, or why there was none; `null` before any attempt. */
const OUTCOME_OR_NONE = [
  { type: 'integer', description: 'The HTTP status the receiver answered.' },
  { type: 'string', enum: ['timeout', 'network_error', 'blocked_host'] },
  { type: 'null', description: 'No attempt yet.' },
];

const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'dropped', 'skipped'];

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
  @ApiProperty({ oneOf: OUTCOME_OR_NONE, description: 'Last delivery outcome.' })
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

@ApiSchema({ name: 'WebhookAttempt', description: 'One attempt of a delivery (internal API).' })
export class WebhookAttemptDto {
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ oneOf: OUTCOME_OR_NONE.slice(0, 2), description: 'The HTTP status, or why there was none.' })
  outcome!: AttemptOutcome;
  @ApiProperty({ type: 'integer', minimum: 0 }) durationMs!: number;
  /** `scheduled` (the delivery worker) or `manual` (a resend). */
  @ApiProperty({
    enum: ['scheduled', 'manual'],
    description: '`scheduled` (the delivery worker) or `manual` (a resend).',
  })
  trigger!: 'scheduled' | 'manual';
  /** The receiver's HTTP status; null without a response (timeout, network error, blocked host) or before it was recorded. */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The receiver's HTTP status; `null` without a response.",
  })
  httpStatus!: number | null;
  /** The first KiB of the receiver's response body (invalid UTF-8 replaced); internal only, never on the public API. */
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The first KiB of the receiver's response body (invalid UTF-8 replaced).",
  })
  responseExcerpt!: string | null;
}

/**
 * One delivery on the internal API. internal-api.md names `attempts` both as
 * the count and as "its attempts log (time, outcome, duration)"; one member
 * cannot be both, so `attempts` is the count and `attemptLog` the log.
 */
@ApiSchema({ name: 'WebhookDelivery', description: 'One delivery and its attempts (internal API).' })
export class WebhookDeliveryResponseDto {
  @ApiProperty({ description: 'Also the `webhook-id` header of every attempt.' }) id!: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType' }) type!: WebhookEventType;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status!: DeliveryStatus;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'How many attempts were made.' }) attempts!: number;
  @ApiProperty({ oneOf: OUTCOME_OR_NONE }) lastStatus!: AttemptOutcome | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) nextAttemptAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  /** W3C trace id of the request that caused the delivery; every attempt sent it in `traceparent`. */
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'W3C trace id of the request that caused the delivery; every attempt sent it in `traceparent`.',
  })
  traceId!: string | null;
  @ApiProperty({ type: () => [WebhookAttemptDto], description: 'The attempts, as a log (`attempts` is their count).' })
  attemptLog!: WebhookAttemptDto[];
}

/**
 * Body of POST /internal/webhooks/{id}/enable. Its fields, like those of the
 * bodies below, are read by the read* functions of
 * webhook-operation-inputs.ts (here readEnableOptions).
 */
@ApiSchema({ name: 'WebhookEnable' })
export class EnableWebhookDto {
  @ApiPropertyOptional({
    type: Boolean,
    description: 'Also queue what the subscription missed while disabled (as `recover` since it was disabled).',
  })
  @Allow()
  recover?: unknown;
}

/** Body of POST /internal/webhooks/{id}/deliveries/{deliveryId}/resend. */
@ApiSchema({ name: 'DeliveryResend' })
export class ResendDeliveryDto {
  @ApiPropertyOptional({ type: Boolean, description: 'Resend on a disabled subscription too (else `409 conflict`).' })
  @Allow()
  force?: unknown;
}

const INSTANT = {
  oneOf: [
    { type: 'string', description: 'ISO 8601.' },
    { type: 'integer', description: 'Epoch milliseconds.' },
  ],
};

/** Body of POST /internal/webhooks/{id}/recover. */
@ApiSchema({ name: 'DeliveriesRecover', description: 'The window `[since, until)` of creation times to queue again.' })
export class RecoverDeliveriesDto {
  @ApiProperty({ ...INSTANT, description: 'Start of the window (inclusive).' }) @Allow() since?: unknown;
  @ApiPropertyOptional({ ...INSTANT, description: 'End of the window (exclusive); default now.' })
  @Allow()
  until?: unknown;
}

/** Body of POST /internal/webhooks/{id}/rotate-secret. */
@ApiSchema({ name: 'SecretRotate' })
export class RotateSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 604800,
    default: 86400,
    description: 'How long the old secret keeps signing beside the new one.',
  })
  @Allow()
  graceSeconds?: unknown;
}

@ApiSchema({ name: 'SecretRotation', description: 'While an old secret still signs beside the new one.' })
export class SecretRotationDto {
  /** When the replaced secret stops signing. */
  @ApiProperty({ format: 'date-time', description: 'When the replaced secret stops signing.' })
  previousExpiresAt!: string;
}

@ApiSchema({ name: 'WebhookHealth', description: 'Over recent attempts; any member may be `null`.' })
export class WebhookHealthDto {
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastSuccessAt!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastFailureAt!: string | null;
  /** Share of 2xx among recent attempts, 0 to 1. */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, maximum: 1, description: 'Share of 2xx, 0 to 1.' })
  successRate!: number | null;
  @ApiProperty({ type: Number, nullable: true, minimum: 0 }) p50Ms!: number | null;
  @ApiProperty({ type: Number, nullable: true, minimum: 0 }) p99Ms!: number | null;
}

@ApiSchema({ name: 'WebhookWarning' })
export class WebhookWarningDto {
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({
    enum: ['failing', 'disabled', 'recovered'],
    description: '`failing` at 5, 10 and 15 consecutive failures.',
  })
  kind!: 'failing' | 'disabled' | 'recovered';
  @ApiProperty({ type: 'integer', minimum: 0 }) consecutiveFailures!: number;
}

/** The Webhook plus `secretRotation` (rotate-secret's answer). */
@ApiSchema({ name: 'RotatedWebhook', description: 'The Webhook with its new `secret`, and `secretRotation`.' })
export class RotatedWebhookResponseDto extends WebhookResponseDto {
  @ApiProperty({ type: () => SecretRotationDto, nullable: true }) secretRotation!: SecretRotationDto | null;
}

/** GET /internal/webhooks/{id}. */
@ApiSchema({
  name: 'WebhookDetail',
  description: 'The Webhook as the public list shows it, with its account, health and warnings.',
})
export class WebhookDetailResponseDto extends RotatedWebhookResponseDto {
  @ApiProperty({ enum: ['organiser', 'venue'] }) accountType!: 'organiser' | 'venue';
  @ApiProperty() accountId!: string;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ type: () => WebhookHealthDto }) health!: WebhookHealthDto;
  @ApiProperty({ type: () => [WebhookWarningDto], description: 'Newest first.' }) warnings!: WebhookWarningDto[];
}

@ApiSchema({ name: 'RecoverResult' })
export class RecoverResultDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Deliveries queued again by this call.' }) queued!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Those left beyond the 10,000 of one call.' })
  remaining!: number;
}
