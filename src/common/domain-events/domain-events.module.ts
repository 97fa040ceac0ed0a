import { Global, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { DomainEventBus } from './domain-event-bus';

@Global()
@Module({
  // ignoreErrors false: a failing in-transaction listener must fail the publish (and roll back).
  imports: [EventEmitterModule.forRoot({ wildcard: false, ignoreErrors: false })],
  providers: [DomainEventBus],
  exports: [DomainEventBus],
})
export class DomainEventsModule {}
