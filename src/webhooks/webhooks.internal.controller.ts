import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiQuery } from '@nestjs/swagger';
import { DomainError } from '../common/errors/domain-error';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations, InternalRefusals } from '../common/openapi/internal-operations.decorator';
import {
  EnableWebhookDto,
  RecoverDeliveriesDto,
  ResendDeliveryDto,
  RotateSecretDto,
  type RecoverResultDto,
  type RotatedWebhookResponseDto,
  type WebhookDeliveryResponseDto,
  type WebhookDetailResponseDto,
  type WebhookResponseDto,
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
  detail(@Param('webhookId') webhookId: string): Promise<WebhookDetailResponseDto> {
    return this.operations.detail(webhookId);
  }

  @Post(':webhookId/enable')
  @HttpCode(200)
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
  recover(
    @Param('webhookId') webhookId: string,
    @ValidatedBody({ optional: true }) body?: RecoverDeliveriesDto,
  ): Promise<RecoverResultDto> {
    return this.operations.recover(webhookId, readRecoverWindow(body as Record<string, unknown>));
  }

  @Post(':webhookId/rotate-secret')
  @HttpCode(200)
  rotateSecret(
    @Param('webhookId') webhookId: string,
    @ValidatedBody({ optional: true }) body?: RotateSecretDto,
  ): Promise<RotatedWebhookResponseDto> {
    return this.operations.rotateSecret(webhookId, readRotateOptions(body as Record<string, unknown>));
  }
}
