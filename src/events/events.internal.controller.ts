import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ValidatedBody } from '../common/validation/validated-body';
import { InternalOperations, InternalRefusals } from '../common/openapi/internal-operations.decorator';
import { DomainError } from '../common/errors/domain-error';
import type { EventResponseDto, InternalEventResponse } from './dto/event.dto';
import { EventsService } from './events.service';
import { InRequest, type RequestContext } from '../common/request-id/request-context';

@InternalOperations('Events')
@Controller('internal/events')
export class EventsInternalController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @HttpCode(201)
  @InternalRefusals({ conflict: 'Created public while planning.date.mode is not fixed' })
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
  publish(@Param('eventId') eventId: string, @InRequest() request: RequestContext): Promise<EventResponseDto> {
    return this.events.publish(eventId, request.traceId);
  }

  @Post(':eventId/touch')
  @HttpCode(200)
  touch(@Param('eventId') eventId: string): Promise<EventResponseDto> {
    return this.events.touch(eventId);
  }

  @Delete(':eventId')
  delete(@Param('eventId') eventId: string): Promise<{ id: string; deleted: true }> {
    return this.events.delete(eventId);
  }
}
