import { Controller, Delete, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { ApiExcludeEndpoint, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import { ErrorCode } from '../common/errors/error-code';
import { EXAMPLES } from '../common/openapi/openapi-examples';
import { PublicOperation } from '../common/openapi/public-operation.decorator';
import { CREATE_WEBHOOK_SCHEMA } from './dto/create-webhook.schema';
import { DeletedWebhookResponseDto, WebhookPage, WebhookResponseDto } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

const SUBSCRIBERS: Array<'organiser' | 'venue'> = ['organiser', 'venue'];

@ApiTags('Webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  // The body holds signing secrets: no cache along the way may keep it.
  @Header('Cache-Control', 'no-store')
  @RequireAccess({ scope: 'webhooks:read', principals: SUBSCRIBERS })
  @PublicOperation({
    operationId: 'listWebhooks',
    summary: 'List webhook subscriptions',
    description:
      "The account's subscriptions (at most ten, so `has_more` is always `false`), with their plaintext `secret`: the response is a credential and is sent with `Cache-Control: no-store`.",
    success: {
      status: 200,
      description: 'A page of subscriptions.',
      body: { page: WebhookPage },
      example: EXAMPLES.webhookPage,
      headers: ['Cache-Control'],
    },
    errors: { 403: [ErrorCode.InsufficientScope] },
  })
  async list(@Auth() auth: AuthContext): Promise<Page<WebhookResponseDto>> {
    return Page.single(await this.webhooks.list(auth.principal));
  }

  @Post()
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @RequireAccess({ scope: 'webhooks:write', principals: SUBSCRIBERS })
  @PublicOperation({
    operationId: 'createWebhook',
    summary: 'Create a webhook subscription',
    description:
      'Subscribes an https URL on a public host to event types. The response carries the signing `secret` (`whsec_` + 64 hex). At most 10 subscriptions per account. A venue key may subscribe to `event.published` only.',
    requestBody: {
      description: 'The subscription.',
      schema: { ...CREATE_WEBHOOK_SCHEMA },
      example: EXAMPLES.webhookCreate,
    },
    success: {
      status: 201,
      description: 'Created.',
      body: { data: WebhookResponseDto },
      example: EXAMPLES.webhook,
      headers: ['Cache-Control'],
    },
    errors: {
      400: [ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope, ErrorCode.Forbidden],
      409: [ErrorCode.LimitReached],
    },
  })
  // A plain object: public bodies never go through class-transformer (see the validation pipe).
  create(
    @Auth() auth: AuthContext,
    @ValidatedBody() body: Record<string, unknown> | undefined,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.create(auth.principal, body ?? {});
  }

  @Delete(':webhookId')
  @RequireAccess({ scope: 'webhooks:write', principals: SUBSCRIBERS })
  @PublicOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook subscription',
    description:
      'Deletes the subscription and drops its waiting deliveries; an attempt already in flight is not recalled. Counts as a write. `DELETE /v1/webhooks` (or `/v1/webhooks/`) without an id answers `400 invalid_argument`.',
    success: {
      status: 200,
      description: 'Deleted.',
      body: { data: DeletedWebhookResponseDto },
      example: EXAMPLES.deletedWebhook,
    },
    errors: {
      400: [ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope],
      404: [ErrorCode.NotFound],
      // A DELETE needs no body, but one sent is still read (up to 1 KiB, as JSON).
      413: [ErrorCode.InvalidArgument],
      415: [ErrorCode.InvalidArgument],
    },
  })
  remove(@Auth() auth: AuthContext, @Param('webhookId') webhookId: string): Promise<DeletedWebhookResponseDto> {
    return this.webhooks.remove(auth.principal, webhookId);
  }

  /** The contract answers a DELETE without an id with 400, not 405; not an operation, so not documented. */
  @Delete()
  @RequireAccess({ scope: 'webhooks:write', principals: SUBSCRIBERS })
  @ApiExcludeEndpoint()
  removeWithoutId(@Auth() auth: AuthContext): Promise<DeletedWebhookResponseDto> {
    return this.webhooks.remove(auth.principal, undefined);
  }
}
