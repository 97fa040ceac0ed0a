import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { pageSchemaOf } from '../../common/openapi/page-schema';
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
}

/**
 * One delivery on the internal API. internal-api.md names `attempts` both as
 * the count and as "its attempts log (time, outcome, duration)"; one member
 * cannot be both, so `attempts` is the count and `attemptLog` the log.
 */
export class WebhookDeliveryResponseDto {
  id!: string;
  type!: WebhookEventType;
  status!: 'pending' | 'succeeded' | 'failed' | 'dropped';
  attempts!: number;
  lastStatus!: AttemptOutcome | null;
  nextAttemptAt!: string | null;
  createdAt!: string;
  attemptLog!: WebhookAttemptDto[];
}
