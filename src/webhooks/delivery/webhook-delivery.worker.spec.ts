import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { ConsoleLogger, Logger, type LoggerService } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { loadAppConfig } from '../../config/app-config';
import type { WebhookSecretCipher } from '../secrets/webhook-secret.cipher';
import type { AttemptRecordRepository } from './attempt-record.repository';
import type { ClaimedDelivery } from './claimed-delivery';
import type { DeliveryClaimRepository } from './delivery-claim.repository';
import type { DeliveryNotifications } from './delivery-notifications';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';

/** What the pg driver throws for each claim while the server refuses connections. */
function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

/** What it throws once the server answers again but a session is cut under the claim. */
function terminated(): Error {
  return Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
    severity: 'FATAL',
  });
}

interface Line {
  level: 'log' | 'warn' | 'error';
  message: string;
}

/**
 * The worker over a claim the test decides, one poll at a time: the poll's
 * timer is an hour away, so each `poll()` is the only sweep that runs.
 */
function workerOverClaims() {
  const outcomes: Array<Error | null> = [];
  const claims = {
    claim: (): Promise<ClaimedDelivery[]> => {
      const outcome = outcomes.shift() ?? null;
      return outcome === null ? Promise.resolve([]) : Promise.reject(outcome);
    },
    releaseLeases: () => Promise.resolve(),
  } as unknown as DeliveryClaimRepository;
  const notifications = { start: () => undefined, stop: () => Promise.resolve() } as unknown as DeliveryNotifications;
  const worker = new WebhookDeliveryWorker(
    claims,
    {} as AttemptRecordRepository,
    {} as WebhookSecretCipher,
    notifications,
    new SchedulerRegistry(),
    loadAppConfig({ WEBHOOK_POLL_MS: '3600000', SERVICE_ROLE: 'all' }),
  );
  return {
    worker,
    /** Runs one sweep whose claim ends in `outcome` (an error, or `null` for a claim that finds nothing). */
    poll: async (outcome: Error | null): Promise<void> => {
      outcomes.push(outcome);
      worker.wake();
      // The sweep ends a few promise turns after its claim settles; a macrotask turn is past all of them.
      await turn();
    },
  };
}

describe('the delivery worker during a database outage', () => {
  const lines: Line[] = [];
  before(() => {
    const capture: LoggerService = {
      log: (message: unknown) => lines.push({ level: 'log', message: String(message) }),
      warn: (message: unknown) => lines.push({ level: 'warn', message: String(message) }),
      error: (message: unknown) => lines.push({ level: 'error', message: String(message) }),
    };
    Logger.overrideLogger(capture);
  });
  after(() => Logger.overrideLogger(new ConsoleLogger()));

  it('says once, as a warning, that claims fail while the database refuses them, and once, as info, when they succeed again, with how long it lasted and how many failed', async () => {
    lines.length = 0;
    const { worker, poll } = workerOverClaims();
    worker.onApplicationBootstrap();
    await turn();
    try {
      for (let failed = 0; failed < 22; failed += 1) await poll(refused());
      await poll(null);
      await poll(null);
    } finally {
      await worker.beforeApplicationShutdown();
    }
    const claimLines = lines.filter((line) => /claim/.test(line.message));
    assert.equal(claimLines.length, 2, JSON.stringify(claimLines));
    const [down, back] = claimLines;
    assert.equal(down?.level, 'warn');
    assert.match(down?.message ?? '', /^could not claim webhook deliveries .*ECONNREFUSED/);
    assert.equal(back?.level, 'log');
    assert.match(
      back?.message ?? '',
      /^webhook deliveries are claimed again, after \d+\.\d s in which 22 claims failed$/,
    );
  });

  it('says a claim failure of another kind than the one already said, once, within the same outage', async () => {
    lines.length = 0;
    const { worker, poll } = workerOverClaims();
    worker.onApplicationBootstrap();
    await turn();
    try {
      await poll(refused());
      await poll(refused());
      await poll(terminated());
      await poll(terminated());
      await poll(refused());
      await poll(null);
    } finally {
      await worker.beforeApplicationShutdown();
    }
    const claimLines = lines.filter((line) => /claim/.test(line.message));
    assert.deepEqual(
      claimLines.map((line) => line.level),
      ['warn', 'warn', 'log'],
      JSON.stringify(claimLines),
    );
    assert.match(claimLines[0]?.message ?? '', /ECONNREFUSED/);
    assert.match(claimLines[1]?.message ?? '', /57P01/);
    assert.match(claimLines[2]?.message ?? '', /in which 5 claims failed$/);
  });
});
