import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client, type Notification } from 'pg';
import { failureName } from '../failure-name';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { sql, sqlText } from '../sql/sql-fragment';
import { defineStatement, NO_PARAMS, SqlStatement, type NoParams } from '../sql/sql-statement';

/** How the one listening connection shows it is alive, and how it comes back. */
export interface NotificationHubTiming {
  /** How often a heartbeat is sent while the previous one has come back. */
  heartbeatMs: number;
  /** A heartbeat outstanding this long means a dead or half-open connection: it is dropped and re-made. */
  reconnectAfterMs: number;
  /** First wait before connecting again; doubles up to `maxRetryMs`. */
  retryMs: number;
  maxRetryMs: number;
}

export const NOTIFICATION_HUB_TIMING: NotificationHubTiming = {
  heartbeatMs: 200,
  reconnectAfterMs: 3_000,
  retryMs: 100,
  maxRetryMs: 2_000,
};

/** How an operator (and pg_stat_activity) tells this connection from the pool's. */
export const NOTIFICATION_APPLICATION_NAME = 'events-api-notifications';

export type NotificationHandler = (payload: string | undefined) => void;

/** Channel names are identifiers fixed in code: LISTEN takes no parameter, so the name is checked instead. */
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

interface Connection {
  client: Client;
  /** The subscribed channels this connection LISTENs on (or has sent LISTEN for). */
  listening: Set<string>;
  backendPid: number | null;
  timer: NodeJS.Timeout | null;
  sequence: number;
  /** The heartbeat in flight: its sequence number and the monotonic time taken before it was sent. */
  outstanding: { sequence: number; sentAt: number } | null;
  /** Set once the connection failed: errors, its end and a failed heartbeat all report the same loss. */
  lost: boolean;
}

const BACKEND_PID = defineStatement<NoParams, { pid: number }>(() => sqlText('SELECT pg_backend_pid() AS pid'), {
  prepared: false,
});

/** Every beat, on this one connection: prepared once on it. */
const HEARTBEAT = defineStatement<{ channel: string; sequence: string }>(
  (p) => sql`SELECT pg_notify(${p.channel}, ${p.sequence})`,
  { prepared: true },
);

/** LISTEN takes no parameter: one statement per channel name (checked, fixed in code), compiled once. */
const channelStatements = new Map<string, { listen: SqlStatement<NoParams> }>();

function statementsFor(channel: string): { listen: SqlStatement<NoParams> } {
  let statements = channelStatements.get(channel);
  if (statements === undefined) {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`not a notification channel name: ${channel}`);
    statements = {
      listen: defineStatement<NoParams>(() => sqlText(`LISTEN ${channel}`), { prepared: false }),
    };
    channelStatements.set(channel, statements);
  }
  return statements;
}

/**
 * The one notification connection of an instance: a dedicated client (not
 * from the pool, so a busy pool cannot starve it, and so it costs one
 * connection whatever the number of channels) that LISTENs on every channel
 * a part of this instance subscribed to (API key changes, delivery wake-ups,
 * ...) and proves itself alive: it NOTIFYs a channel of its own and, when the
 * notification comes back, every notification committed before it was sent
 * has been delivered too (PostgreSQL delivers notifications in commit
 * order); `onAlive` hears that proof with the monotonic time taken before
 * the heartbeat was sent. A connection that fails, or whose heartbeat does
 * not come back in time (half-open), is reported to `onLost` at once and
 * made again with a growing backoff; each time it listens again (the first
 * time too) `onReconnect` hears it, since whatever was sent meanwhile was
 * missed. Nothing connects until a first `listen`: an instance whose role
 * subscribes to nothing opens no connection.
 */
@Injectable()
export class NotificationHub implements OnApplicationShutdown {
  private readonly logger = new Logger(NotificationHub.name);
  private readonly timing: NotificationHubTiming = NOTIFICATION_HUB_TIMING;
  /** The channel only this instance listens on, for its own heartbeats (a reconnect numbers them afresh). */
  private readonly heartbeatChannel = `notification_hub_${randomBytes(8).toString('hex')}`;
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly reconnectHandlers = new Set<() => void>();
  private readonly aliveHandlers = new Set<(sentAt: number) => void>();
  private readonly lostHandlers = new Set<(error: unknown) => void>();
  private connection: Connection | null = null;
  private started = false;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;
  private retryMs = this.timing.retryMs;
  private outage = false;

  constructor(@Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'databaseUrl'>) {}

  /**
   * Calls `handler` with the payload of every notification on `channel`
   * from now on (connecting on the first call). Returns the unsubscribe.
   */
  listen(channel: string, handler: NotificationHandler): () => void {
    statementsFor(channel);
    let handlers = this.handlers.get(channel);
    if (handlers === undefined) {
      handlers = new Set();
      this.handlers.set(channel, handlers);
      const connection = this.connection;
      if (connection !== null) this.listenOnLiveConnection(connection, channel);
    }
    handlers.add(handler);
    this.start();
    return () => this.unlisten(channel, handler);
  }

  /** Each time the connection listens on every channel again, and the first time: what was sent meanwhile was missed. */
  onReconnect(handler: () => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => this.reconnectHandlers.delete(handler);
  }

  /** A heartbeat came back: everything committed before `sentAt` (monotonic ms) has been delivered. */
  onAlive(handler: (sentAt: number) => void): () => void {
    this.aliveHandlers.add(handler);
    return () => this.aliveHandlers.delete(handler);
  }

  /** The connection failed or went silent: notifications may be missed until `onReconnect`. */
  onLost(handler: (error: unknown) => void): () => void {
    this.lostHandlers.add(handler);
    return () => this.lostHandlers.delete(handler);
  }

  /** The channels listened on (operations, tests). */
  get channels(): string[] {
    return [...this.handlers.keys()];
  }

  /** The PostgreSQL backend of the listening connection, while connected (operations, tests). */
  get backendPid(): number | null {
    return this.connection?.backendPid ?? null;
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

  private start(): void {
    if (this.started || this.stopped || this.config.databaseUrl === null) return;
    this.started = true;
    this.startConnecting();
  }

  /** Local only: the connection keeps the channel until it is next made (its notifications find no handler). */
  private unlisten(channel: string, handler: NotificationHandler): void {
    const handlers = this.handlers.get(channel);
    if (handlers === undefined || !handlers.delete(handler) || handlers.size > 0) return;
    this.handlers.delete(channel);
  }

  /**
   * A channel added while connected: queued after LISTEN on the same client,
   * the next heartbeat comes back only once the LISTEN is in effect, so the
   * one already in flight (sent before it) must not count as proof for it.
   */
  private listenOnLiveConnection(connection: Connection, channel: string): void {
    connection.outstanding = null;
    connection.listening.add(channel);
    statementsFor(channel)
      .listen.affected(NO_PARAMS, { sqlConnection: () => connection.client })
      .catch((error: unknown) => this.lost(connection, error));
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
      application_name: NOTIFICATION_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
    });
    const connection: Connection = {
      client,
      listening: new Set(),
      backendPid: null,
      timer: null,
      sequence: 0,
      outstanding: null,
      lost: false,
    };
    const target = { sqlConnection: () => client };
    client.on('notification', (message) => this.notified(connection, message));
    client.on('error', (error) => this.lost(connection, error));
    client.on('end', () => this.lost(connection, new Error('connection ended')));
    try {
      await client.connect();
      connection.backendPid = (await BACKEND_PID.one(NO_PARAMS, target))?.pid ?? null;
      await statementsFor(this.heartbeatChannel).listen.affected(NO_PARAMS, target);
      // Until every channel subscribed so far listens, including one added while this ran.
      for (let missing = this.unlistened(connection); missing !== undefined; missing = this.unlistened(connection)) {
        connection.listening.add(missing);
        await statementsFor(missing).listen.affected(NO_PARAMS, target);
      }
    } catch (error) {
      this.lost(connection, error);
      return;
    }
    if (this.stopped) {
      await this.close(connection);
      return;
    }
    this.connection = connection;
    this.retryMs = this.timing.retryMs;
    if (this.outage) this.logger.log('notification connection is back; every channel listens again');
    this.outage = false;
    for (const handler of this.reconnectHandlers) handler();
    connection.timer = setInterval(() => this.beat(connection), this.timing.heartbeatMs);
    connection.timer.unref();
    this.beat(connection);
  }

  private unlistened(connection: Connection): string | undefined {
    return [...this.handlers.keys()].find((channel) => !connection.listening.has(channel));
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
    HEARTBEAT.rows(
      { channel: this.heartbeatChannel, sequence: String(connection.sequence) },
      { sqlConnection: () => connection.client },
    ).catch((error: unknown) => this.lost(connection, error));
  }

  private notified(connection: Connection, message: Notification): void {
    if (this.connection !== connection) return;
    if (message.channel === this.heartbeatChannel) {
      const outstanding = connection.outstanding;
      if (outstanding?.sequence !== Number(message.payload)) return;
      connection.outstanding = null;
      for (const handler of this.aliveHandlers) handler(outstanding.sentAt);
      return;
    }
    for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload);
  }

  private lost(connection: Connection, error: unknown): void {
    if (connection.lost) return;
    connection.lost = true;
    if (this.connection === connection) {
      this.connection = null;
      for (const handler of this.lostHandlers) handler(error);
    }
    void this.close(connection);
    if (this.stopped || this.retry !== null) return;
    if (!this.outage) {
      this.logger.warn(
        `notification connection lost (${this.channels.join(', ')}), connecting again: ${failureName(error)}`,
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
