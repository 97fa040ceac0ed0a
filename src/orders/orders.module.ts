import { Module } from '@nestjs/common';

/** The Orders bounded context (filled in by its own issue). */
@Module({})
export class OrdersModule {}
