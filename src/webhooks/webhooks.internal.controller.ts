import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
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

  /** Not a page: the internal contract is `{data: [...]}` newest first. */
  @Get(':webhookId/deliveries')
  deliveries(@Param('webhookId') webhookId: string): Promise<WebhookDeliveryResponseDto[]> {
    return this.operations.deliveries(webhookId);
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
