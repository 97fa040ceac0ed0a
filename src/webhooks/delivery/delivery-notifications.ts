import { Inject, Injectable, Logger } from '@nestjs/common';
import { Client } from 'pg';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { OutboxSenderId } from '../outbox/outbox-sender-id';
import { DELIVERY_CHANNEL } from './delivery-queue.repository';

const RECONNECT_MS = 2_000;

/**
 * A dedicated connection LISTENing on the outbox channel, so that a delivery
 * written by any instance wakes every instance's worker within milliseconds
 * instead of at the next poll (this instance's own outbox writes wake it in
 * process, so their echo is ignored). Losing it only costs latency: the poll still
 * runs, and the connection is re-made.
 */
@Injectable()
export class DeliveryNotifications {
  private readonly logger = new Logger(DeliveryNotifications.name);
  private client: Client | null = null;
  private stopped = true;
  private retry: NodeJS.Timeout | null = null;
  private onNotify: () => void = () => undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sender: OutboxSenderId,
  ) {}

  start(onNotify: () => void): void {
    this.onNotify = onNotify;
    this.stopped = false;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry !== null) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped || this.config.databaseUrl === null) return;
    const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'events-api-webhooks' });
    client.on('notification', (message) => {
      // Our own outbox's echo: that commit already woke this worker in process.
      if (message.payload !== this.sender.id) this.onNotify();
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN ${DELIVERY_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    // Anything written while we were not listening is picked up now, not at the next poll.
    this.onNotify();
  }

  private lost(client: Client, error: unknown): void {
    if (this.client === client) this.client = null;
    client.removeAllListeners('end');
    client.removeAllListeners('error');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.stopped || this.retry !== null) return;
    if (error !== null)
      this.logger.warn(
        `webhook notification listener lost its connection: ${error instanceof Error ? error.message : 'unknown error'}`,
      );
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, RECONNECT_MS);
    this.retry.unref();
  }
}
