import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { roleDuties } from '../config/service-role';
import { NotificationHub } from '../database/notifications/notification-hub';
import { ApiKeyCache } from './api-key-cache';

/** Sent by the api_key triggers (migration ApiKeyChangeNotifications) with the key hash, or `*` for all. */
export const API_KEY_CHANGED_CHANNEL = 'api_key_changed';

/**
 * Keeps the API key cache honest through the instance's notification
 * connection: a key change evicts that key; the connection's proof of
 * liveness (every change committed before its heartbeat was sent has been
 * delivered) trusts the cache for its trust window from that send; a lost
 * connection distrusts it at once; a (re)connect clears it, since changes
 * were missed while nobody listened. It subscribes wherever the API is
 * served (a worker authenticates no API key); without it (one-shot
 * commands, cache off) the cache is never trusted: lookups read the database.
 */
@Injectable()
export class ApiKeyRevocationsListener implements OnModuleInit {
  constructor(
    private readonly cache: ApiKeyCache,
    private readonly hub: NotificationHub,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const { servesApi } = roleDuties(this.config);
    if (!this.config.runBackgroundWork || !servesApi || !this.cache.enabled) return;
    this.hub.onReconnect(() => this.cache.clear());
    this.hub.onAlive((sentAt) => this.cache.confirmFreshAsOf(sentAt));
    this.hub.onLost(() => this.cache.distrust());
    this.hub.listen(API_KEY_CHANGED_CHANNEL, (payload) => {
      if (payload === '*' || payload === undefined) this.cache.clear();
      else this.cache.evict(payload);
    });
  }
}
