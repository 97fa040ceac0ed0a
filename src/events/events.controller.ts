import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import type { Page } from '../common/envelope/page';
import { headerMatches } from '../common/http/entity-tag';
import { PageQuery } from '../common/pagination/page-query.decorator';
import type { PageRequest } from '../common/pagination/page-request';
import { PagedList } from '../common/pagination/paged-list.decorator';
import { EventResponseDto } from './dto/event.dto';
import { EventsService } from './events.service';

const EVENT_PATCH_BODY = {
  description: 'EventPatch: writable fields only; any other key is dropped silently.',
  schema: { type: 'object', additionalProperties: true },
} as const;

@ApiTags('Events')
@ApiBearerAuth()
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequireAccess({ scope: 'events:read', principals: ['organiser', 'venue'] })
  @PagedList()
  @ApiOperation({ summary: 'List visible events: startTime descending, or updatedAt ascending with updated_after' })
  list(@Auth() auth: AuthContext, @PageQuery() page: PageRequest): Promise<Page<EventResponseDto>> {
    return this.events.list(auth.principal, page);
  }

  @Post()
  @HttpCode(201)
  @RequireAccess({ scope: 'events:write', principals: ['organiser'] })
  @ApiOperation({ summary: 'Create an event (draft or unlisted); Idempotency-Key required' })
  @ApiHeader({ name: 'Idempotency-Key', required: true })
  @ApiBody(EVENT_PATCH_BODY)
  async create(
    @Auth() auth: AuthContext,
    @Body() body: Record<string, unknown>,
    @Headers('idempotency-key') rawKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const outcome = await this.events.createOnce(auth, body, rawKey);
    void reply.status(outcome.response.status).headers(outcome.response.headers);
    if (outcome.replayed) void reply.header('idempotent-replayed', 'true');
    return outcome.response.body;
  }

  @Get(':eventId')
  @RequireAccess({ scope: 'events:read', principals: ['organiser', 'venue'] })
  @ApiOperation({ summary: 'One event; strong ETag; If-None-Match answers 304' })
  async get(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EventResponseDto | undefined> {
    const { event, etag } = await this.events.get(auth.principal, eventId);
    void reply.header('etag', etag);
    if (ifNoneMatch !== undefined && headerMatches(ifNoneMatch, etag)) {
      void reply.status(304);
      return undefined;
    }
    return event;
  }

  @Patch(':eventId')
  @RequireAccess({ scope: 'events:write', principals: ['organiser'] })
  @ApiOperation({ summary: 'Merge writable fields into an event; optional If-Match' })
  @ApiHeader({ name: 'If-Match', required: false })
  @ApiBody(EVENT_PATCH_BODY)
  async update(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @Body() body: Record<string, unknown>,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EventResponseDto> {
    const { event, etag } = await this.events.update(auth, eventId, body, ifMatch);
    void reply.header('etag', etag);
    return event;
  }
}
