import { Injectable } from '@nestjs/common';
import { sql, sqlText } from '../../database/sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from '../../database/sql/sql-statement';
import { Database } from '../../database/sql/sql-target';
import type { Transaction } from '../../database/unit-of-work';

export const IDEMPOTENCY_RETENTION_DAYS = 7;
/** How long a request waits for a concurrent one holding the same key before it is told to retry. */
export const CONCURRENT_WAIT = '5s';

const EXPIRED = sqlText(`created_at < now() - interval '${IDEMPOTENCY_RETENTION_DAYS} days'`);

/** A stored key's record, as a repeat of its request reads it. */
export interface StoredKey {
  state: string;
  requestFingerprint: string;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
}

export interface KeyOf {
  organizerId: string;
  key: string;
}

/** The statements of every create: named, prepared once per connection. */
const LOCK_TIMEOUT = defineStatement<NoParams>(
  () => sql`SELECT set_config('lock_timeout', ${sqlText(`'${CONCURRENT_WAIT}'`)}, true)`,
  { prepared: true },
);
const EXPIRE = defineStatement<KeyOf>(
  (p) => sql`DELETE FROM idempotency_key WHERE organizer_id = ${p.organizerId} AND key = ${p.key} AND ${EXPIRED}`,
  { prepared: true },
);
/**
 * Once the key is claimed, the wait bound is lifted again (to the session's
 * own value), in the same round trip: it is for a concurrent request holding
 * the key, and must not turn the create's own wait for another lock (a row
 * its foreign key checks, held by some other write) into a "still in
 * progress" answer for the key's first request.
 */
const CLAIM = defineStatement<KeyOf & { fingerprint: string }>(
  (p) => sql`WITH claimed AS (
               INSERT INTO idempotency_key (organizer_id, key, state, request_fingerprint)
               VALUES (${p.organizerId}, ${p.key}, 'pending', ${p.fingerprint}) ON CONFLICT DO NOTHING RETURNING key
             )
             SELECT key, set_config('lock_timeout', (SELECT reset_val FROM pg_settings WHERE name = 'lock_timeout'), true)
               FROM claimed`,
  { prepared: true },
);
const STORE = defineStatement<KeyOf & { status: number; headers: string; body: string }>(
  (p) => sql`UPDATE idempotency_key
                SET state = 'succeeded', response_status = ${p.status}, response_headers = ${p.headers},
                    response_body = ${p.body}
              WHERE organizer_id = ${p.organizerId} AND key = ${p.key}`,
  { prepared: true },
);
const REPLAY = defineStatement<KeyOf, StoredKey>(
  (p) => sql`SELECT state, request_fingerprint AS "requestFingerprint", response_status AS "responseStatus",
                    response_headers AS "responseHeaders", response_body AS "responseBody"
               FROM idempotency_key WHERE organizer_id = ${p.organizerId} AND key = ${p.key}`,
  { prepared: true },
);
const PURGE = defineStatement<NoParams>(() => sql`DELETE FROM idempotency_key WHERE ${EXPIRED}`, {
  prepared: false,
});

/** All SQL on `idempotency_key`: the service holds the rules (when to claim, replay, purge), this class the statements. */
@Injectable()
export class IdempotencyKeyRepository {
  constructor(private readonly database: Database) {}

  /** Bounds how long the transaction waits for a lock (a concurrent request's claim) to the configured wait, until a claim. */
  async limitLockWait(tx: Transaction): Promise<void> {
    await LOCK_TIMEOUT.rows(NO_PARAMS, tx);
  }

  /** Forgets the key when it is past its retention, so it can be claimed anew. */
  async expire(key: KeyOf, tx: Transaction): Promise<void> {
    await EXPIRE.affected(key, tx);
  }

  /**
   * Claims the key for this transaction; false when a row for it exists (committed, or held by a concurrent one).
   * Claimed, the transaction waits for other locks without the bound again.
   */
  async claim(key: KeyOf, fingerprint: string, tx: Transaction): Promise<boolean> {
    return (await CLAIM.one({ ...key, fingerprint }, tx)) !== null;
  }

  /** Stores the response of the claimed key, in the claiming transaction. */
  async store(key: KeyOf, response: { status: number; headers: string; body: string }, tx: Transaction): Promise<void> {
    await STORE.affected({ ...key, ...response }, tx);
  }

  async find(key: KeyOf, tx: Transaction): Promise<StoredKey | null> {
    return REPLAY.one(key, tx);
  }

  /** Deletes every key past its retention; the number deleted. */
  async purgeExpired(): Promise<number> {
    return PURGE.affected(NO_PARAMS, this.database);
  }
}
