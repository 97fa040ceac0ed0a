import { Injectable } from '@nestjs/common';
import { sql } from '../database/sql/sql-fragment';
import { defineStatement } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import { UnitOfWork } from '../database/unit-of-work';
import { parseState, storedState, type SessionState } from './session-store';

/** How long sessions live, in seconds, all judged on the database clock. */
export interface SessionLifetimes {
  idleSeconds: number;
  /** Ends a session however busy it is, so a stolen cookie cannot be kept alive forever. */
  absoluteSeconds: number;
  /** The idle clock is written back at most this often, so a busy page does not write on every request. */
  touchSeconds: number;
}

interface LiveRow {
  csrf_secret: string;
  state: unknown;
}

const INSERT_SESSION = defineStatement<{
  tokenHash: Buffer;
  adminTokenId: Buffer;
  csrfSecret: string;
  idleSeconds: number;
  absoluteSeconds: number;
}>(
  (p) => sql`
    INSERT INTO dashboard_session (token_hash, admin_token_id, csrf_secret, expires_at)
    VALUES (${p.tokenHash}, ${p.adminTokenId}, ${p.csrfSecret},
            now() + least(${p.idleSeconds}::int, ${p.absoluteSeconds}::int) * interval '1 second')`,
  { prepared: false },
);

/**
 * The live row a cookie names, read on every dashboard request (no cache, so
 * a sign-out anywhere is seen at once), opened with the admin token the
 * service runs with now. Its idle clock moves only when the last write is
 * older than `touchSeconds`; the same statement does it.
 */
const TOUCH_SESSION = defineStatement<
  { tokenHash: Buffer; adminTokenId: Buffer; idleSeconds: number; absoluteSeconds: number; touchSeconds: number },
  LiveRow
>(
  (p) => sql`
    WITH live AS (
      SELECT token_hash, csrf_secret, state,
             last_seen_at < now() - ${p.touchSeconds}::int * interval '1 second' AS stale
        FROM dashboard_session
       WHERE token_hash = ${p.tokenHash} AND admin_token_id = ${p.adminTokenId} AND expires_at > now()
    ), touched AS (
      UPDATE dashboard_session AS session
         SET last_seen_at = now(),
             expires_at = least(now() + ${p.idleSeconds}::int * interval '1 second',
                                session.created_at + ${p.absoluteSeconds}::int * interval '1 second')
        FROM live
       WHERE session.token_hash = live.token_hash AND live.stale
      RETURNING session.token_hash
    )
    SELECT csrf_secret, state FROM live`,
  { prepared: true },
);

const LOCK_STATE = defineStatement<{ tokenHash: Buffer }, { state: unknown }>(
  (p) => sql`
    SELECT state FROM dashboard_session
     WHERE token_hash = ${p.tokenHash} AND expires_at > now()
       FOR UPDATE`,
  { prepared: false },
);

const WRITE_STATE = defineStatement<{ tokenHash: Buffer; state: string }>(
  (p) => sql`UPDATE dashboard_session SET state = ${p.state}::jsonb WHERE token_hash = ${p.tokenHash}`,
  { prepared: false },
);

const DELETE_SESSION = defineStatement<{ tokenHash: Buffer }>(
  (p) => sql`DELETE FROM dashboard_session WHERE token_hash = ${p.tokenHash}`,
  { prepared: false },
);

/** A bounded batch, oldest first; SKIP LOCKED lets two instances purge side by side without waiting. */
const PURGE_EXPIRED = defineStatement<{ limit: number }>(
  (p) => sql`
    DELETE FROM dashboard_session
     WHERE token_hash IN (SELECT token_hash FROM dashboard_session
                           WHERE expires_at <= now()
                           ORDER BY expires_at
                           LIMIT ${p.limit}::int
                             FOR UPDATE SKIP LOCKED)`,
  { prepared: false },
);

/**
 * Dashboard sessions in PostgreSQL, named by the SHA-256 of the cookie
 * value, each bound to the admin token it was opened with (`adminTokenId`,
 * an HMAC of it): a session opened with another token is not found.
 */
@Injectable()
export class DashboardSessionRepository {
  constructor(
    private readonly database: Database,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  async insert(
    tokenHash: Buffer,
    adminTokenId: Buffer,
    csrfSecret: string,
    lifetimes: SessionLifetimes,
  ): Promise<void> {
    await INSERT_SESSION.affected(
      {
        tokenHash,
        adminTokenId,
        csrfSecret,
        idleSeconds: lifetimes.idleSeconds,
        absoluteSeconds: lifetimes.absoluteSeconds,
      },
      this.database,
    );
  }

  /** The live session's CSRF secret and state, its idle clock moved on; null when unknown or expired. */
  async touch(
    tokenHash: Buffer,
    adminTokenId: Buffer,
    lifetimes: SessionLifetimes,
  ): Promise<{ csrfSecret: string; state: SessionState } | null> {
    const row = await TOUCH_SESSION.one({ tokenHash, adminTokenId, ...lifetimes }, this.database);
    return row === null ? null : { csrfSecret: row.csrf_secret, state: parseState(row.state) };
  }

  /**
   * Changes the stored state, row locked: two tabs posting at once each add
   * their message and neither loses the other's, and of two requests taking
   * the same value only one gets it. A session ended meanwhile stays ended
   * (null, nothing written).
   */
  async modify<T>(tokenHash: Buffer, apply: (state: SessionState) => T): Promise<T | null> {
    return this.unitOfWork.run(async (tx) => {
      const row = await LOCK_STATE.one({ tokenHash }, tx);
      if (row === null) return null;
      const state = parseState(row.state);
      const result = apply(state);
      await WRITE_STATE.affected({ tokenHash, state: JSON.stringify(storedState(state)) }, tx);
      return result;
    });
  }

  async delete(tokenHash: Buffer): Promise<void> {
    await DELETE_SESSION.affected({ tokenHash }, this.database);
  }

  /** Deletes up to `limit` expired sessions; returns how many. */
  async purgeExpired(limit: number): Promise<number> {
    return PURGE_EXPIRED.affected({ limit }, this.database);
  }
}
