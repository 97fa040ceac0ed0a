import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventEntity } from './entities/event.entity';
import { EventPresenter } from './event.presenter';
import { EventRepository } from './event.repository';
import { IdentityModule } from '../identity/identity.module';
import { VenuesModule } from '../venues/venues.module';
import { EventsController } from './events.controller';
import { EventsInternalController } from './events.internal.controller';
import { EventsService } from './events.service';
import { IdempotencyKeyRepository } from './idempotency/idempotency-key.repository';
import { IdempotencyService } from './idempotency/idempotency.service';

@Module({
  imports: [TypeOrmModule.forFeature([EventEntity]), IdentityModule, VenuesModule],
  controllers: [EventsController, EventsInternalController],
  providers: [EventsService, EventRepository, EventPresenter, IdempotencyService, IdempotencyKeyRepository],
  exports: [EventsService],
})
export class EventsModule {}
