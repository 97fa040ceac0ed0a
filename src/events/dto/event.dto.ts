import { ApiProperty } from '@nestjs/swagger';
import { VISIBILITIES, type Visibility } from '../../../libs/event-rules';

/** The public Event shape (api-v1.md "Event"): narrower than the stored record. */
export class EventResponseDto {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Flattened: EN when present, else the first locale.' })
  title!: string | null;
  @ApiProperty({ enum: VISIBILITIES }) visibility!: Visibility;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) startTime!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) endTime!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) updatedAt!: string | null;
  @ApiProperty({ format: 'uri' }) url!: string;
}

/** Internal responses add the owner, which the public shape never shows. */
export interface InternalEventResponse extends EventResponseDto {
  organizerId: string | null;
}

/** The `data` of an `event.published` webhook delivery. */
export interface EventPublishedData {
  eventId: string;
  title: string | null;
  startTime: string | null;
  endTime: string | null;
  url: string;
}
