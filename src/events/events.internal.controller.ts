import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { ApiBody } from '@nestjs/swagger';
import { DeletedDto } from '../common/openapi/deleted-schema';
import { ref } from '../common/openapi/openapi-conventions';
import { InternalOperations, InternalRefusals, InternalSuccess } from '../common/openapi/internal-operations.decorator';
import { DomainError } from '../common/errors/domain-error';
import { EventResponseDto, InternalEventResponse } from './dto/event.dto';
import { EventsService } from './events.service';
import { InRequest, type RequestContext } from '../common/request-id/request-context';

@InternalOperations('Events')
@Controller('internal/events')
export class EventsInternalController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @HttpCode(201)
  @InternalRefusals({ conflict: 'Created public while planning.date.mode is not fixed' })
  @ApiBody({ schema: ref('schemas', 'InternalEventCreate') })
  @InternalSuccess({
    status: 201,
    description: 'The Event in its public shape plus `organizerId`.',
    body: { data: InternalEventResponse },
  })
  create(
    @ValidatedBody() body: Record<string, unknown> | undefined,
    @InRequest() request: RequestContext,
  ): Promise<InternalEventResponse> {
    // A request without a body (no Content-Type) reaches the handler with none: it lacks organizerId like `{}` does.
    const fields = body ?? {};
    const organizerId = fields['organizerId'];
    if (organizerId !== null && typeof organizerId !== 'string') {
      throw DomainError.invalidArgument('organizerId must be a string or null.');
    }
    return this.events.createInternal(organizerId, fields, request.traceId);
  }

  @Post(':eventId/publish')
  @HttpCode(200)
  @InternalRefusals({ conflict: 'planning.date.mode is not fixed' })
  @InternalSuccess({
    status: 200,
    description:
      'The Event, now public. `event.published` is emitted the first time an event becomes public, never again.',
    body: { data: EventResponseDto },
  })
  publish(@Param('eventId') eventId: string, @InRequest() request: RequestContext): Promise<EventResponseDto> {
    return this.events.publish(eventId, request.traceId);
  }

  @Post(':eventId/touch')
  @HttpCode(200)
  @InternalSuccess({ status: 200, description: 'The Event: only `updatedAt` moved.', body: { data: EventResponseDto } })
  touch(@Param('eventId') eventId: string): Promise<EventResponseDto> {
    return this.events.touch(eventId);
  }

  @Delete(':eventId')
  @InternalSuccess({ status: 200, description: 'Hard delete.', body: { data: DeletedDto } })
  delete(@Param('eventId') eventId: string): Promise<DeletedDto> {
    return this.events.delete(eventId);
  }
}
