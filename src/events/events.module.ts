import { Module } from '@nestjs/common';

/** The Events bounded context (filled in by its own issue). */
@Module({})
export class EventsModule {}
