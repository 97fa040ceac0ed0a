import type { AttemptRecord, AttemptRecorded } from './attempt-record.repository';

/** Writes attempts that finished together; each settles on its own (see AttemptRecordRepository.recordAttempts). */
export type RecordAttempts = (
  records: readonly AttemptRecord[],
) => Promise<Array<PromiseSettledResult<AttemptRecorded>>>;

export interface AttemptRecorderOptions {
  /** At most this many attempts in one write. */
  maxBatch: number;
  /** How long the first attempt of a batch waits for others to finish, when no write is under way. */
  gatherMs: number;
}

export const DEFAULT_RECORDER_OPTIONS: AttemptRecorderOptions = { maxBatch: 32, gatherMs: 2 };

interface Waiting {
  record: AttemptRecord;
  resolve: (recorded: AttemptRecorded) => void;
  reject: (reason: unknown) => void;
}

/**
 * Gathers the outcomes of attempts that finish close together and writes them
 * in one go, one write at a time: while a write is under way the next batch
 * gathers, so the busier the worker, the larger the batches and the fewer the
 * round trips. Nothing is written before its batch is: an attempt whose
 * process dies while it waits leaves its lease to expire, and the delivery is
 * attempted again, as when the process dies before a single write.
 */
export class AttemptRecorder {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing = false;

  constructor(
    private readonly write: RecordAttempts,
    private readonly options: AttemptRecorderOptions = DEFAULT_RECORDER_OPTIONS,
  ) {}

  /** Resolves once the attempt is written (or rejects when its write failed). */
  record(record: AttemptRecord): Promise<AttemptRecorded> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ record, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    // A write under way takes what gathered when it ends.
    if (this.writing) return;
    if (this.waiting.length >= this.options.maxBatch) {
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), this.options.gatherMs);
  }

  private flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.waiting.splice(0, this.options.maxBatch);
    if (batch.length === 0) return;
    this.writing = true;
    void this.writeBatch(batch).finally(() => {
      this.writing = false;
      // What gathered during the write has waited long enough.
      if (this.waiting.length > 0) this.flush();
    });
  }

  private async writeBatch(batch: Waiting[]): Promise<void> {
    let results: Array<PromiseSettledResult<AttemptRecorded>>;
    try {
      results = await this.write(batch.map((waiting) => waiting.record));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => {
      const result = results[i];
      if (result?.status === 'fulfilled') waiting.resolve(result.value);
      else waiting.reject(result === undefined ? new Error('the attempt was not written') : result.reason);
    });
  }
}
