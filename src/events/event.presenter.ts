import { Inject, Injectable } from '@nestjs/common';
import { flattenLocalisedText } from '../../libs/locale/localised-text';
import type { Visibility } from '../../libs/event-rules';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { isoTimestampSql } from '../database/iso-timestamp-sql';
import type { EventResponseDto } from './dto/event.dto';

/** The columns every event read selects, with timestamps formatted once, in SQL. */
export const EVENT_RESPONSE_COLUMNS = (alias: string): string =>
  [
    `${alias}.id`,
    `${alias}.title`,
    `${alias}.visibility`,
    `${isoTimestampSql(`${alias}.start_time`)} AS start_time`,
    `${isoTimestampSql(`${alias}.end_time`)} AS end_time`,
    `${isoTimestampSql(`${alias}.updated_at`)} AS updated_at`,
  ].join(', ');

export interface EventResponseRow {
  id: string;
  title: Record<string, string> | null;
  visibility: Visibility | null;
  start_time: string | null;
  end_time: string | null;
  updated_at: string | null;
}

/** Turns a selected row into the public Event shape. */
@Injectable()
export class EventPresenter {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  present(row: EventResponseRow): EventResponseDto {
    return {
      id: row.id,
      title: flattenLocalisedText(row.title),
      visibility: row.visibility ?? 'draft',
      startTime: row.start_time,
      endTime: row.end_time,
      updatedAt: row.updated_at,
      url: this.urlOf(row.id),
    };
  }

  urlOf(eventId: string): string {
    return `${this.config.publicWebUrl}/events/${encodeURIComponent(eventId)}`;
  }
}
