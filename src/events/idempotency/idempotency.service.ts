import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DomainError } from '../../common/errors/domain-error';
import { ErrorCode } from '../../common/errors/error-code';
import { ScheduledJobs } from '../../database/jobs/scheduled-jobs';
import { UnitOfWork, type Transaction } from '../../database/unit-of-work';
import type { RequestContext } from '../../common/request-id/request-context';
import { IdempotencyKeyRepository, type KeyOf } from './idempotency-key.repository';

export { IDEMPOTENCY_RETENTION_DAYS } from './idempotency-key.repository';
/** The scheduled job that deletes keys past their retention, hourly. */
export const IDEMPOTENCY_PURGE_JOB = 'idempotency-purge';
const IDEMPOTENCY_PURGE_EVERY_MS = 60 * 60 * 1000;
/** The longest `Idempotency-Key` taken; a key is printable ASCII without spaces (`!` to `~`). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
export const IDEMPOTENCY_KEY_PATTERN = /^[!-~]+$/;
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** One `POST /v1/events` as the idempotency record sees it: whose key, which body, for which request (its log lines). */
export interface IdempotentRequest {
  organizerId: string;
  key: string;
  requestBody: unknown;
  request: RequestContext;
}

export interface IdempotentOutcome {
  response: StoredResponse;
  replayed: boolean;
}

function fingerprintOf(body: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(body) ?? '';
  } catch {
    // The body parser bounds nesting long before this; a body that still cannot be serialised is the caller's.
    throw DomainError.invalidArgument('The request body cannot be fingerprinted (nested too deeply).');
  }
  return createHash('sha256').update(text).digest('hex');
}

/**
 * `Idempotency-Key` for POST /v1/events, scoped per organiser, kept 7 days.
 *
 * The key is claimed by inserting its row in the same transaction as the
 * creation, and the stored response is written in that transaction too:
 * - a repeat after success finds the committed row and replays it;
 * - a failed attempt rolls back its row, so the next attempt is new;
 * - a concurrent request with the same key blocks on the row's unique index
 *   until the first commits (then replays) or rolls back (then proceeds),
 *   so two concurrent requests create exactly one event. It waits at most
 *   5 seconds, then gets `409 conflict` and can retry.
 * A reuse with a different body replays all the same (as documented) and is logged.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit {
  private readonly logger = new Logger(IdempotencyService.name);
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly keys: IdempotencyKeyRepository,
    private readonly jobs: ScheduledJobs,
  ) {}

  onModuleInit(): void {
    this.jobs.every(IDEMPOTENCY_PURGE_JOB, IDEMPOTENCY_PURGE_EVERY_MS, () => this.purgeExpired());
  }

  static validKey(raw: string | string[] | undefined): string {
    if (raw === undefined || (typeof raw === 'string' && raw.trim() === '')) {
      throw new DomainError(ErrorCode.IdempotencyKeyRequired, 'POST /v1/events requires an Idempotency-Key header.');
    }
    if (typeof raw !== 'string' || raw.length > MAX_IDEMPOTENCY_KEY_LENGTH || !IDEMPOTENCY_KEY_PATTERN.test(raw)) {
      throw DomainError.invalidArgument(
        `Idempotency-Key must be one header of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters.`,
      );
    }
    return raw;
  }

  async execute(
    idempotent: IdempotentRequest,
    work: (tx: Transaction) => Promise<StoredResponse>,
  ): Promise<IdempotentOutcome> {
    const { organizerId } = idempotent;
    const key: KeyOf = { organizerId, key: idempotent.key };
    const fingerprint = fingerprintOf(idempotent.requestBody);
    try {
      const outcome = await this.unitOfWork.run(async (tx): Promise<IdempotentOutcome> => {
        await this.keys.limitLockWait(tx);
        await this.keys.expire(key, tx);
        if (!(await this.keys.claim(key, fingerprint, tx))) {
          return { response: await this.replay(tx, idempotent, fingerprint), replayed: true };
        }
        const response = await work(tx);
        await this.keys.store(
          key,
          { status: response.status, headers: JSON.stringify(response.headers), body: JSON.stringify(response.body) },
          tx,
        );
        return { response, replayed: false };
      });
      return outcome;
    } catch (error) {
      if ((error as { code?: unknown }).code === '55P03') {
        throw new DomainError(
          ErrorCode.Conflict,
          'A request with this Idempotency-Key is still in progress; retry in a few seconds.',
        );
      }
      throw error;
    }
  }

  /** Deletes keys past their retention (the hourly job, on one instance at a time). */
  async purgeExpired(): Promise<number> {
    return this.keys.purgeExpired();
  }

  private async replay(
    tx: Transaction,
    { organizerId, key, request }: IdempotentRequest,
    fingerprint: string,
  ): Promise<StoredResponse> {
    const row = await this.keys.find({ organizerId, key }, tx);
    if (row === null || row.state !== 'succeeded' || row.responseStatus === null || row.responseBody === null) {
      throw new DomainError(
        ErrorCode.Conflict,
        'A request with this Idempotency-Key is still in progress; retry shortly.',
      );
    }
    if (row.requestFingerprint !== fingerprint) {
      this.logger.warn({
        msg: `Idempotency-Key reused with a different body by organiser ${organizerId}; replaying the original response`,
        reqId: request.requestId,
      });
    }
    return {
      status: row.responseStatus,
      headers: row.responseHeaders ?? {},
      body: JSON.parse(row.responseBody) as unknown,
    };
  }
}
