import { Module } from '@nestjs/common';

/** The Webhooks bounded context (filled in by its own issue). */
@Module({})
export class WebhooksModule {}
