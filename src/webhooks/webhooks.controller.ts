import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import { Page } from '../common/envelope/page';
import { CreateWebhookDto, DeletedWebhookResponseDto, WebhookResponseDto } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

const SUBSCRIBERS: Array<'organiser' | 'venue'> = ['organiser', 'venue'];

@ApiTags('Webhooks')
@ApiBearerAuth()
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  // The body holds signing secrets: no cache along the way may keep it.
  @Header('Cache-Control', 'no-store')
  @RequireAccess({ scope: 'webhooks:read', principals: SUBSCRIBERS })
  @ApiOperation({
    summary: "The account's subscriptions (at most ten), secrets included: the response is a credential",
  })
  @ApiOkResponse({ type: [WebhookResponseDto] })
  async list(@Auth() auth: AuthContext): Promise<Page<WebhookResponseDto>> {
    return Page.single(await this.webhooks.list(auth.principal));
  }

  @Post()
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @RequireAccess({ scope: 'webhooks:write', principals: SUBSCRIBERS })
  @ApiOperation({ summary: 'Subscribe an https url to event types; the response carries the signing secret' })
  @ApiBody({ type: CreateWebhookDto })
  @ApiCreatedResponse({ type: WebhookResponseDto })
  // A plain object: public bodies never go through class-transformer (see the validation pipe).
  create(@Auth() auth: AuthContext, @Body() body: Record<string, unknown> | undefined): Promise<WebhookResponseDto> {
    return this.webhooks.create(auth.principal, body ?? {});
  }

  @Delete(':webhookId')
  @RequireAccess({ scope: 'webhooks:write', principals: SUBSCRIBERS })
  @ApiOperation({ summary: 'Delete a subscription; deliveries already in flight are not recalled' })
  @ApiOkResponse({ type: DeletedWebhookResponseDto })
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
