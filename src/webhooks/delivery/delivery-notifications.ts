import { Injectable } from '@nestjs/common';
import { NotificationHub } from '../../database/notifications/notification-hub';
import { OutboxSenderId } from '../outbox/outbox-sender-id';
import { DELIVERY_CHANNEL } from './delivery-queue.repository';

/**
 * Wakes the delivery worker when a delivery is written by any instance
 * (the outbox channel, heard on the instance's notification connection),
 * within milliseconds instead of at the next poll; this instance's own
 * outbox writes wake it in process, so their echo is ignored. Losing the
 * connection only costs latency: the poll still runs, and on every
 * (re)connect the worker wakes for what was written while nobody listened.
 */
@Injectable()
export class DeliveryNotifications {
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly hub: NotificationHub,
    private readonly sender: OutboxSenderId,
  ) {}

  start(onNotify: () => void): void {
    this.unsubscribe.push(
      this.hub.onReconnect(onNotify),
      this.hub.listen(DELIVERY_CHANNEL, (payload) => {
        // Our own outbox's echo: that commit already woke this worker in process.
        if (payload !== this.sender.id) onNotify();
      }),
    );
  }

  stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    return Promise.resolve();
  }
}
