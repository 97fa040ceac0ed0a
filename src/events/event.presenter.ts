import { Inject, Injectable } from '@nestjs/common';
import { flattenLocalisedText } from '../../libs/locale/localised-text';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { EventPublishedData, EventResponseDto } from './dto/event.dto';
import type { EventView } from './event.repository';

/** Turns the event's view into the public Event shape, and into the `data` of its webhooks. */
@Injectable()
export class EventPresenter {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  present(view: EventView): EventResponseDto {
    return {
      id: view.id,
      title: flattenLocalisedText(view.title),
      visibility: view.visibility ?? 'draft',
      startTime: view.startTime,
      endTime: view.endTime,
      updatedAt: view.updatedAt,
      url: this.urlOf(view.id),
    };
  }

  /** The `data` of an `event.published` delivery (api-v1.md "Events"). */
  publishedData(view: EventView): EventPublishedData {
    return {
      eventId: view.id,
      title: flattenLocalisedText(view.title),
      startTime: view.startTime,
      endTime: view.endTime,
      url: this.urlOf(view.id),
    };
  }

  urlOf(eventId: string): string {
    return `${this.config.publicWebUrl}/events/${encodeURIComponent(eventId)}`;
  }
}
