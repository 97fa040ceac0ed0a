import { Controller, Get, Headers, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AuthContext } from '../common/auth-context/access';
import { Auth } from '../common/auth-context/auth.decorator';
import { RequireAccess } from '../common/auth-context/require-access.decorator';
import type { Page, SerializedBody } from '../common/envelope/page';
import { ifNoneMatchMatches } from '../common/http/entity-tag';
import { prefixBeforeVersion } from '../common/http/listener';
import { PageQuery } from '../common/pagination/page-query.decorator';
import type { PageRequest } from '../common/pagination/page-request';
import { ErrorCode } from '../common/errors/error-code';
import { EVENT_PATCH_EXAMPLE, EXAMPLES } from '../common/openapi/openapi-examples';
import { ref } from '../common/openapi/openapi-conventions';
import { PublicOperation } from '../common/openapi/public-operation.decorator';
import { PagedList } from '../common/pagination/paged-list.decorator';
import { EventPage, EventResponseDto } from './dto/event.dto';
import { EventsService } from './events.service';
import {
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_RETENTION_DAYS,
  MAX_IDEMPOTENCY_KEY_LENGTH,
} from './idempotency/idempotency.service';
import { InRequest, type RequestContext } from '../common/request-id/request-context';

/** `EventCreate` and `EventPatch` are built from libs/event-rules' field table (event-patch.schema.ts). */
const EVENT_CREATE_BODY = {
  description: 'EventPatch with `startTime` required: writable fields only; any other key is dropped silently.',
  schema: ref('schemas', 'EventCreate'),
  example: EVENT_PATCH_EXAMPLE,
};
const EVENT_PATCH_BODY = {
  description: 'EventPatch: writable fields only; any other key is dropped silently.',
  schema: ref('schemas', 'EventPatch'),
  example: EVENT_PATCH_EXAMPLE,
};

@ApiTags('Events')
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequireAccess({ scope: 'events:read', principals: ['organiser', 'venue'] })
  @PagedList()
  @PublicOperation({
    operationId: 'listEvents',
    summary: 'List events',
    description:
      'An organiser key sees its own events; a venue key the events at its address (every `public` one, an `unlisted` one only when it belongs to a placeholder business or to no organiser, never a `draft`). Ordered by `startTime` descending, or by `updatedAt` ascending with `updated_after`. Events without a `startTime` are never listed.',
    success: { status: 200, description: 'A page of events.', body: { page: EventPage }, example: EXAMPLES.eventPage },
    errors: {
      400: [ErrorCode.InvalidCursor, ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope],
    },
  })
  list(@Auth() auth: AuthContext, @PageQuery() page: PageRequest): Promise<Page<EventResponseDto>> {
    return this.events.list(auth.principal, page);
  }

  @Post()
  @HttpCode(201)
  @RequireAccess({ scope: 'events:write', principals: ['organiser'] })
  @PublicOperation({
    operationId: 'createEvent',
    summary: 'Create an event',
    description: `Creates a \`draft\` (default) or \`unlisted\` event owned by the calling organiser. \`startTime\` is required. A repeat with an \`Idempotency-Key\` that already succeeded replays the stored response (status, body, \`ETag\`, \`Location\`) with \`Idempotent-Replayed: true\` and creates nothing; a key whose attempt failed is treated as new. Keys are kept ${IDEMPOTENCY_RETENTION_DAYS} days per organiser.`,
    requestHeaders: [
      {
        name: 'Idempotency-Key',
        required: true,
        description: `Opaque string, unique per create; reuse it to retry safely. 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without spaces (a UUID fits); anything else is \`400 invalid_argument\`.`,
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
          pattern: IDEMPOTENCY_KEY_PATTERN.source,
        },
      },
    ],
    requestBody: EVENT_CREATE_BODY,
    success: {
      status: 201,
      description: 'Created (or replayed).',
      body: { data: EventResponseDto },
      example: EXAMPLES.event,
      headers: ['ETag', 'Location', 'Idempotent-Replayed'],
    },
    errors: {
      400: [ErrorCode.IdempotencyKeyRequired, ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope, ErrorCode.Forbidden],
      409: [ErrorCode.Conflict],
    },
  })
  async create(
    @Auth() auth: AuthContext,
    @ValidatedBody() body: Record<string, unknown>,
    @Headers('idempotency-key') rawKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
    @InRequest() request: RequestContext,
  ): Promise<unknown> {
    const outcome = await this.events.createOnce(auth, body, rawKey, request);
    const { location, ...headers } = outcome.response.headers;
    void reply.status(outcome.response.status).headers(headers);
    // The new event's path as this caller reaches it: behind the same path prefix, when it sent one.
    if (location !== undefined)
      void reply.header('location', prefixBeforeVersion(reply.request.originalUrl) + location);
    if (outcome.replayed) void reply.header('idempotent-replayed', 'true');
    return outcome.response.body;
  }

  @Get(':eventId')
  @RequireAccess({ scope: 'events:read', principals: ['organiser', 'venue'] })
  @PublicOperation({
    operationId: 'getEvent',
    summary: 'Get an event',
    description:
      'An event owned by another organiser, or not visible to the caller, is `404 not_found` (never 403). The `ETag` changes only when a visible value changes; `If-None-Match` with it answers `304`.',
    requestHeaders: [
      {
        name: 'If-None-Match',
        required: false,
        description: 'An `ETag` from an earlier response (or `*`): `304` without a body while it still matches.',
      },
    ],
    success: {
      status: 200,
      description: 'The event.',
      body: { data: EventResponseDto },
      example: EXAMPLES.event,
      headers: ['ETag'],
    },
    notModified: true,
    errors: { 403: [ErrorCode.InsufficientScope], 404: [ErrorCode.NotFound] },
  })
  async get(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SerializedBody | undefined> {
    const { body, etag } = await this.events.get(auth.principal, eventId);
    void reply.header('etag', etag);
    if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)) {
      void reply.status(304);
      return undefined;
    }
    return body;
  }

  @Patch(':eventId')
  @RequireAccess({ scope: 'events:write', principals: ['organiser'] })
  @PublicOperation({
    operationId: 'updateEvent',
    summary: 'Update an event',
    description:
      'Merges the writable fields of the body into the event; other keys are dropped. A body with no writable field is `400 invalid_argument`. No `Idempotency-Key` is needed. With `If-Match`, the write happens only if the event still has that ETag (checked under a row lock); otherwise `412` and nothing is written.',
    requestHeaders: [
      {
        name: 'If-Match',
        required: false,
        description:
          'An `ETag` from the GET, or `*` meaning the event must exist. Without it the write is unconditional.',
      },
    ],
    requestBody: EVENT_PATCH_BODY,
    success: {
      status: 200,
      description: 'The updated event.',
      body: { data: EventResponseDto },
      example: EXAMPLES.event,
      headers: ['ETag'],
    },
    errors: {
      400: [ErrorCode.InvalidArgument],
      403: [ErrorCode.InsufficientScope, ErrorCode.Forbidden],
      404: [ErrorCode.NotFound],
      412: [ErrorCode.PreconditionFailed],
    },
  })
  async update(
    @Auth() auth: AuthContext,
    @Param('eventId') eventId: string,
    @ValidatedBody() body: Record<string, unknown>,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SerializedBody> {
    const updated = await this.events.update(auth, eventId, body, ifMatch);
    void reply.header('etag', updated.etag);
    return updated.body;
  }
}
