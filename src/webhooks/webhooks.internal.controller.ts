import { Controller, Get, Header, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiQuery } from '@nestjs/swagger';
import { DomainError } from '../common/errors/domain-error';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations, InternalRefusals, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import {
  EnableWebhookDto,
  RecoverDeliveriesDto,
  RecoverResultDto,
  ResendDeliveryDto,
  RotatedWebhookResponseDto,
  RotateSecretDto,
  WebhookDeliveryResponseDto,
  WebhookDetailResponseDto,
  WebhookResponseDto,
} from './dto/webhook.dto';
import {
  DELIVERY_CURSOR,
  readEnableOptions,
  readRecoverWindow,
  readResendOptions,
  readRotateOptions,
} from './webhook-operation-inputs';
import { WebhookOperationsService } from './webhook-operations.service';

@InternalOperations('Webhooks')
@Controller('internal/webhooks')
export class WebhooksInternalController {
  constructor(private readonly operations: WebhookOperationsService) {}

  @Get(':webhookId')
  @Header('Cache-Control', 'no-store')
  @InternalSuccess({
    status: 200,
    description: 'The subscription with its account, secret rotation, health and warnings.',
    body: { data: WebhookDetailResponseDto },
    headers: ['Cache-Control'],
  })
  detail(@Param('webhookId') webhookId: string): Promise<WebhookDetailResponseDto> {
    return this.operations.detail(webhookId);
  }

  @Post(':webhookId/enable')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @InternalSuccess({
    status: 200,
    description: '`enabled` is `true` and `consecutiveFailures` 0.',
    body: { data: WebhookResponseDto },
    headers: ['Cache-Control'],
  })
  enable(
    @Param('webhookId') webhookId: string,
    @ValidatedBody({ optional: true }) body?: EnableWebhookDto,
  ): Promise<WebhookResponseDto> {
    return this.operations.enable(webhookId, readEnableOptions(body as Record<string, unknown>));
  }

  /**
   * `{data: [...]}` newest first, exactly as the internal contract says, 500 at a time. When there are
   * more, `Link: <…?cursor=…>; rel="next"` (RFC 8288, as GitHub's API pages) names the next 500, so every
   * delivery a resend may name can be reached without changing the body.
   */
  @Get(':webhookId/deliveries')
  @InternalSuccess({
    status: 200,
    description: 'Newest first, 500 at a time; `Link` names the next 500.',
    body: { dataList: WebhookDeliveryResponseDto },
    headers: ['Link'],
  })
  @AcceptsQuery('cursor')
  @ApiQuery({
    name: 'cursor',
    required: false,
    description: 'From the `Link` header\'s `rel="next"` of the page before: the 500 deliveries older than it.',
  })
  async deliveries(
    @Param('webhookId') webhookId: string,
    @Query('cursor') cursor: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookDeliveryResponseDto[]> {
    if (cursor !== undefined && (typeof cursor !== 'string' || !DELIVERY_CURSOR.test(cursor))) {
      throw DomainError.invalidArgument('cursor must be the one the Link header of the page before names.');
    }
    const page = await this.operations.deliveryPage(webhookId, { cursor });
    if (page.nextCursor !== null) {
      const next = `/internal/webhooks/${encodeURIComponent(webhookId)}/deliveries?cursor=${encodeURIComponent(page.nextCursor)}`;
      void reply.header('link', `<${next}>; rel="next"`);
    }
    return page.items;
  }

  @Post(':webhookId/deliveries/:deliveryId/resend')
  @HttpCode(202)
  @InternalRefusals({ conflict: 'The subscription is disabled and force is not true' })
  @InternalSuccess({
    status: 202,
    description: 'The delivery as the delivery log shows it, with one new attempt queued.',
    body: { data: WebhookDeliveryResponseDto },
  })
  resend(
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @ValidatedBody({ optional: true }) body?: ResendDeliveryDto,
  ): Promise<WebhookDeliveryResponseDto> {
    return this.operations.resend(webhookId, deliveryId, readResendOptions(body as Record<string, unknown>));
  }

  @Post(':webhookId/recover')
  @HttpCode(202)
  @InternalRefusals({ conflict: 'The subscription is disabled' })
  @InternalSuccess({
    status: 202,
    description: 'How many deliveries were queued again, and how many remain beyond this call.',
    body: { data: RecoverResultDto },
  })
  recover(
    @Param('webhookId') webhookId: string,
    @ValidatedBody({ optional: true }) body?: RecoverDeliveriesDto,
  ): Promise<RecoverResultDto> {
    return this.operations.recover(webhookId, readRecoverWindow(body as Record<string, unknown>));
  }

  @Post(':webhookId/rotate-secret')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @InternalSuccess({
    status: 200,
    description: 'The subscription with its new `secret` and `secretRotation`.',
    body: { data: RotatedWebhookResponseDto },
    headers: ['Cache-Control'],
  })
  rotateSecret(
    @Param('webhookId') webhookId: string,
    @ValidatedBody({ optional: true }) body?: RotateSecretDto,
  ): Promise<RotatedWebhookResponseDto> {
    return this.operations.rotateSecret(webhookId, readRotateOptions(body as Record<string, unknown>));
  }
}
