import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client, type Notification } from 'pg';
import { describeError } from '../common/logging/loggable-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ApiKeyCache } from './api-key-cache';

/** Sent by the api_key triggers (migration ApiKeyChangeNotifications) with the key hash, or `*` for all. */
export const API_KEY_CHANGED_CHANNEL = 'api_key_changed';

export interface RevocationsListenerTiming {
  /** How often a heartbeat is sent while the previous one has come back. */
  heartbeatMs: number;
  /** A heartbeat outstanding this long means a dead or half-open connection: it is dropped and re-made. */
  reconnectAfterMs: number;
  /** First wait before connecting again; doubles up to `maxRetryMs`. */
  retryMs: number;
  maxRetryMs: number;
}

export const REVOCATIONS_LISTENER_TIMING: RevocationsListenerTiming = {
  heartbeatMs: 200,
  reconnectAfterMs: 3_000,
  retryMs: 100,
  maxRetryMs: 2_000,
};

interface Connection {
  client: Client;
  /** The channel only this connection listens on, for its own heartbeats. */
  heartbeatChannel: string;
  backendPid: number | null;
  timer: NodeJS.Timeout | null;
  sequence: number;
  /** The heartbeat in flight: its sequence number and the monotonic time taken before it was sent. */
  outstanding: { sequence: number; sentAt: number } | null;
  /** Set once the connection failed: errors, its end and a failed heartbeat all report the same loss. */
  lost: boolean;
}

/**
 * One dedicated connection per instance (not from the pool, so a busy pool
 * cannot starve it) that LISTENs for key changes and evicts them from the
 * cache, and proves itself alive: it NOTIFYs a channel of its own and, when
 * the notification comes back, every change committed before it was sent has
 * been delivered too (PostgreSQL delivers notifications in commit order), so
 * the cache is trusted for the cache's trust window from that send. A lost
 * connection distrusts the cache at once; a half-open one stops renewing the
 * trust; a reconnect clears the cache, since notifications were missed.
 */
@Injectable()
export class ApiKeyRevocationsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyRevocationsListener.name);
  private readonly timing: RevocationsListenerTiming = REVOCATIONS_LISTENER_TIMING;
  private connection: Connection | null = null;
  private stopped = true;
  private retry: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;
  private retryMs = this.timing.retryMs;
  private outage = false;

  constructor(
    private readonly cache: ApiKeyCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Without the listener (one-shot commands, cache off) the cache is never trusted: lookups read the database. */
  onApplicationBootstrap(): void {
    if (!this.config.runBackgroundWork || !this.cache.enabled || this.config.databaseUrl === null) return;
    this.stopped = false;
    this.startConnecting();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.retry = null;
    await this.connecting;
    const connection = this.connection;
    this.connection = null;
    if (connection !== null) await this.close(connection);
  }

  /** The PostgreSQL backend of the listening connection, while connected (operations, tests). */
  get backendPid(): number | null {
    return this.connection?.backendPid ?? null;
  }

  private startConnecting(): void {
    const connecting = this.connect().finally(() => {
      if (this.connecting === connecting) this.connecting = null;
    });
    this.connecting = connecting;
  }

  private async connect(): Promise<void> {
    if (this.stopped || this.config.databaseUrl === null) return;
    const client = new Client({
      connectionString: this.config.databaseUrl,
      application_name: 'events-api-key-listener',
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
    });
    const connection: Connection = {
      client,
      heartbeatChannel: `api_key_heartbeat_${randomBytes(8).toString('hex')}`,
      backendPid: null,
      timer: null,
      sequence: 0,
      outstanding: null,
      lost: false,
    };
    client.on('notification', (message) => this.notified(connection, message));
    client.on('error', (error) => this.lost(connection, error));
    client.on('end', () => this.lost(connection, new Error('connection ended')));
    try {
      await client.connect();
      const pid = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      connection.backendPid = pid.rows[0]?.pid ?? null;
      await client.query(`LISTEN ${API_KEY_CHANGED_CHANNEL}`);
      await client.query(`LISTEN ${connection.heartbeatChannel}`);
    } catch (error) {
      this.lost(connection, error);
      return;
    }
    if (this.stopped) {
      await this.close(connection);
      return;
    }
    // Changes made while nobody listened were never heard of; lookups from now on are.
    this.cache.clear();
    this.connection = connection;
    this.retryMs = this.timing.retryMs;
    if (this.outage) this.logger.log('API key revocations listener reconnected; key cache cleared');
    this.outage = false;
    connection.timer = setInterval(() => this.beat(connection), this.timing.heartbeatMs);
    connection.timer.unref();
    this.beat(connection);
  }

  private beat(connection: Connection): void {
    const outstanding = connection.outstanding;
    if (outstanding !== null) {
      if (performance.now() - outstanding.sentAt > this.timing.reconnectAfterMs) {
        this.lost(connection, new Error(`no heartbeat for ${this.timing.reconnectAfterMs} ms`));
      }
      return;
    }
    connection.sequence += 1;
    connection.outstanding = { sequence: connection.sequence, sentAt: performance.now() };
    connection.client
      .query(`NOTIFY ${connection.heartbeatChannel}, '${connection.sequence}'`)
      .catch((error: unknown) => this.lost(connection, error));
  }

  private notified(connection: Connection, message: Notification): void {
    if (this.connection !== connection) return;
    if (message.channel === API_KEY_CHANGED_CHANNEL) {
      if (message.payload === '*' || message.payload === undefined) this.cache.clear();
      else this.cache.evict(message.payload);
      return;
    }
    const outstanding = connection.outstanding;
    if (message.channel === connection.heartbeatChannel && outstanding?.sequence === Number(message.payload)) {
      connection.outstanding = null;
      this.cache.confirmFreshAsOf(outstanding.sentAt);
    }
  }

  private lost(connection: Connection, error: unknown): void {
    if (connection.lost) return;
    connection.lost = true;
    if (this.connection === connection) {
      this.connection = null;
      this.cache.distrust();
    }
    void this.close(connection);
    if (this.stopped || this.retry !== null) return;
    if (!this.outage) {
      this.logger.warn(
        `API key revocations listener lost its connection, keys are read from the database until it is back: ${describeError(error)}`,
      );
    }
    this.outage = true;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.startConnecting();
    }, this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, this.timing.maxRetryMs);
  }

  /** Ends the connection, cutting the socket if the server does not answer (a half-open connection never would). */
  private async close(connection: Connection): Promise<void> {
    if (connection.timer !== null) clearInterval(connection.timer);
    connection.timer = null;
    const { client } = connection;
    client.removeAllListeners('notification');
    client.removeAllListeners('end');
    client.removeAllListeners('error');
    client.on('error', () => undefined);
    let cut: NodeJS.Timeout | undefined;
    await Promise.race([
      client.end().catch(() => undefined),
      new Promise<void>((resolve) => {
        cut = setTimeout(() => {
          client.connection.stream.destroy();
          resolve();
        }, 500);
      }),
    ]);
    clearTimeout(cut);
  }
}
