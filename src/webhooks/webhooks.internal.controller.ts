import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { InternalOperations } from '../common/openapi/internal-operations.decorator';
import type { WebhookDeliveryResponseDto, WebhookResponseDto } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

@InternalOperations('Webhooks')
@Controller('internal/webhooks')
export class WebhooksInternalController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post(':webhookId/enable')
  @HttpCode(200)
  enable(@Param('webhookId') webhookId: string): Promise<WebhookResponseDto> {
    return this.webhooks.enable(webhookId);
  }

  /** Not a page: the internal contract is `{data: [...]}` newest first. */
  @Get(':webhookId/deliveries')
  deliveries(@Param('webhookId') webhookId: string): Promise<WebhookDeliveryResponseDto[]> {
    return this.webhooks.deliveriesOf(webhookId);
  }
}
