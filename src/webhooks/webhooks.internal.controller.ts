import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { Page } from '../common/envelope/page';
import { DomainError } from '../common/errors/domain-error';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations } from '../common/openapi/internal-operations.decorator';
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
import { readEnableOptions, readRecoverWindow, readResendOptions, readRotateOptions } from './webhook-operation-inputs';
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
   * `{data: [...]}` newest first, as the internal contract says, 500 at a time, with `has_more` and
   * `next_cursor` (pass it as `cursor` for the next 500) added so that every delivery can be reached.
   */
  @Get(':webhookId/deliveries')
  @AcceptsQuery('cursor')
  @ApiQuery({
    name: 'cursor',
    required: false,
    description: 'The `next_cursor` of the page before: the 500 deliveries older than its last one.',
  })
  deliveries(
    @Param('webhookId') webhookId: string,
    @Query('cursor') cursor: unknown,
  ): Promise<Page<WebhookDeliveryResponseDto>> {
    if (cursor !== undefined && (typeof cursor !== 'string' || !/^[\w-]{1,100}$/.test(cursor))) {
      throw DomainError.invalidArgument('cursor must be the next_cursor of the page before.');
    }
    return this.operations.deliveryPage(webhookId, cursor);
  }

  @Post(':webhookId/deliveries/:deliveryId/resend')
  @HttpCode(202)
  resend(
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @ValidatedBody({ optional: true }) body?: ResendDeliveryDto,
  ): Promise<WebhookDeliveryResponseDto> {
    return this.operations.resend(webhookId, deliveryId, readResendOptions(body as Record<string, unknown>));
  }

  @Post(':webhookId/recover')
  @HttpCode(202)
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
