import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { describeError } from '../common/logging/loggable-error';
import { ApiKeyRepository } from './api-key.repository';

const FLUSH_INTERVAL_MS = 30_000;

/**
 * Records when each key was last used without a write per request: uses are
 * collected in memory and written in one statement every 30 seconds and at
 * shutdown. A crash loses at most that window of "last used" times, which
 * are informational.
 */
@Injectable()
export class KeyUsageRecorder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(KeyUsageRecorder.name);
  private pending = new Map<string, Date>();

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onModuleInit(): void {
    const interval = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    interval.unref();
    this.scheduler.addInterval('api-key-last-used-flush', interval);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  used(keyId: string, at: Date = new Date()): void {
    this.pending.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.keys.recordLastUsed(batch);
    } catch (error) {
      this.logger.warn(`could not record key last-used times: ${describeError(error)}`);
    }
  }
}
