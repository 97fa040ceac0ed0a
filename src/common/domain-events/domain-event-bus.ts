import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { Transaction } from '../../database/unit-of-work';
import type { DomainEvent } from './domain-event';

/** Suffix of the announcement emitted once the publishing transaction has committed. */
export const COMMITTED = '.committed';

/**
 * The internal bus between bounded contexts, on Nest's event emitter.
 *
 * `publish` must be called inside the transaction that made the fact true.
 * Listeners of `event.type` run right away, awaited, with that transaction
 * (`@OnEvent(type)` receiving `(event, tx)`): whatever they write commits or
 * rolls back with the change. This is how the webhook outbox is filled.
 * Listeners of `event.type + COMMITTED` run after the commit, and never when
 * the transaction rolls back: use them to wake workers, never to persist.
 */
@Injectable()
export class DomainEventBus {
  constructor(private readonly emitter: EventEmitter2) {}

  async publish(event: DomainEvent, tx: Transaction): Promise<void> {
    await this.emitter.emitAsync(event.type, event, tx);
    tx.afterCommit(() => {
      this.emitter.emit(event.type + COMMITTED, event);
    });
  }
}
