import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { VISIBILITIES, type Visibility } from '../../../libs/event-rules';
import { pageSchemaOf } from '../../common/openapi/page-schema';

/** The public Event shape (api-v1.md "Event"): narrower than the stored record. */
@ApiSchema({ name: 'Event', description: 'An event as the API shows it (narrower than the stored record).' })
export class EventResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Flattened: EN when present, else the first locale.' })
  title!: string | null;
  @ApiProperty({
    enum: VISIBILITIES,
    enumName: 'Visibility',
    description: 'No stored visibility reads as `draft`. Only `draft` and `unlisted` are writable through the API.',
  })
  visibility!: Visibility;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) startTime!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) endTime!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Time of the last write of any kind, including writes the API does not expose; what `updated_after` compares.',
  })
  updatedAt!: string | null;
  @ApiProperty({ format: 'uri' }) url!: string;
}

/** The page envelope around Events, for the OpenAPI document. */
export const EventPage = pageSchemaOf(EventResponseDto, 'EventPage');

/** Internal responses add the owner, which the public shape never shows. */
@ApiSchema({ name: 'InternalEvent', description: 'The Event in its public shape plus its owner (internal API).' })
export class InternalEventResponse extends EventResponseDto {
  @ApiProperty({ type: String, nullable: true, description: 'The owning organiser; `null` for none.' })
  organizerId!: string | null;
}

/** The `data` of an `event.published` webhook delivery. */
export interface EventPublishedData {
  eventId: string;
  title: string | null;
  startTime: string | null;
  endTime: string | null;
  url: string;
}
