import { Injectable } from '@nestjs/common';
import { defineStatement } from '../database/sql/sql-statement';
import { sql } from '../database/sql/sql-fragment';
import { Database } from '../database/sql/sql-target';
import type { Transaction } from '../database/unit-of-work';

export type PortalAccountType = 'organiser' | 'venue';

export interface PortalAccount {
  type: PortalAccountType;
  id: string;
}

/** A live portal session as every portal request reads it. */
export interface PortalSessionRow {
  id: string;
  account_type: PortalAccountType;
  account_id: string;
  read_only: boolean;
  csrf_token: string;
  has_flashes: boolean;
  /** The rotated subscriptions whose new secret has not been shown yet (each is shown once). */
  secret_reveal_webhook_ids: string[];
}

/** Rotated secrets owed a showing per session: an account has at most ten subscriptions. */
export const MAX_PENDING_SECRET_REVEALS = 10;

export interface PortalFlash {
  kind: 'success' | 'error';
  text: string;
}

/** Why a link did not open: already opened, past its time, revoked, or never minted. */
export type LinkRefusal = 'used' | 'expired' | 'revoked' | 'unknown';

const INSERT_LINK = defineStatement<
  { tokenHash: string; accountType: string; accountId: string; readOnly: boolean; ttlSeconds: number },
  { expires_at: Date }
>(
  (p) => sql`INSERT INTO portal_link (token_hash, account_type, account_id, read_only, expires_at)
             VALUES (${p.tokenHash}, ${p.accountType}, ${p.accountId}, ${p.readOnly},
                     now() + ${p.ttlSeconds} * interval '1 second')
             RETURNING expires_at`,
  { prepared: false },
);

/** Opens a link at most once: the row is claimed by the one statement that sets `opened_at`. */
const OPEN_LINK = defineStatement<
  { tokenHash: string },
  { account_type: PortalAccountType; account_id: string; read_only: boolean }
>(
  (p) => sql`UPDATE portal_link SET opened_at = now()
              WHERE token_hash = ${p.tokenHash} AND opened_at IS NULL AND revoked_at IS NULL AND expires_at > now()
              RETURNING account_type, account_id, read_only`,
  { prepared: false },
);

const LINK_STATE = defineStatement<{ tokenHash: string }, { refusal: LinkRefusal }>(
  (p) => sql`SELECT CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
                         WHEN opened_at IS NOT NULL THEN 'used'
                         ELSE 'expired' END AS refusal
               FROM portal_link WHERE token_hash = ${p.tokenHash}`,
  { prepared: false },
);

const INSERT_SESSION = defineStatement<{
  id: string;
  tokenHash: string;
  accountType: string;
  accountId: string;
  readOnly: boolean;
  csrfToken: string;
}>(
  (p) => sql`INSERT INTO portal_session (id, token_hash, account_type, account_id, read_only, csrf_token)
             VALUES (${p.id}, ${p.tokenHash}, ${p.accountType}, ${p.accountId}, ${p.readOnly}, ${p.csrfToken})`,
  { prepared: false },
);

/**
 * Every portal request: the session a cookie names, if it is live (not
 * revoked, idle less than `idleSeconds`, younger than `absoluteSeconds`, by
 * the database clock that every instance shares), its idle clock restarted.
 */
const TOUCH_SESSION = defineStatement<
  { tokenHash: string; idleSeconds: number; absoluteSeconds: number },
  PortalSessionRow
>(
  (p) => sql`UPDATE portal_session SET last_seen_at = now()
              WHERE token_hash = ${p.tokenHash} AND revoked_at IS NULL
                AND last_seen_at > now() - ${p.idleSeconds} * interval '1 second'
                AND created_at > now() - ${p.absoluteSeconds} * interval '1 second'
              RETURNING id, account_type, account_id, read_only, csrf_token,
                        flashes <> '[]'::jsonb AS has_flashes, secret_reveal_webhook_ids`,
  { prepared: true },
);

const END_SESSION = defineStatement<{ id: string }>(
  (p) => sql`UPDATE portal_session SET revoked_at = now() WHERE id = ${p.id} AND revoked_at IS NULL`,
  { prepared: false },
);

const REVOKE_SESSIONS = defineStatement<{ accountType: string; accountId: string }>(
  (p) => sql`UPDATE portal_session SET revoked_at = now()
              WHERE account_type = ${p.accountType} AND account_id = ${p.accountId} AND revoked_at IS NULL`,
  { prepared: false },
);

const REVOKE_LINKS = defineStatement<{ accountType: string; accountId: string }>(
  (p) => sql`UPDATE portal_link SET revoked_at = now()
              WHERE account_type = ${p.accountType} AND account_id = ${p.accountId}
                AND opened_at IS NULL AND revoked_at IS NULL AND expires_at > now()`,
  { prepared: false },
);

const PUSH_FLASH = defineStatement<{ id: string; flash: string }>(
  (p) => sql`UPDATE portal_session SET flashes = flashes || ${p.flash}::jsonb WHERE id = ${p.id}`,
  { prepared: false },
);

/** Reads and empties the flashes in one statement, so two tabs never both show one. */
const TAKE_FLASHES = defineStatement<{ id: string }, { flashes: PortalFlash[] }>(
  (p) => sql`UPDATE portal_session s SET flashes = '[]'::jsonb
               FROM (SELECT id, flashes FROM portal_session WHERE id = ${p.id} FOR UPDATE) old
              WHERE s.id = old.id
              RETURNING old.flashes`,
  { prepared: false },
);

/**
 * Adds a subscription to those whose rotated secret may be shown once (moved
 * to the end if already there); past `keep`, the oldest permissions go.
 */
const ADD_SECRET_REVEAL = defineStatement<{ id: string; webhookId: string; keep: number }>(
  (p) => sql`UPDATE portal_session
                SET secret_reveal_webhook_ids =
                      (array_remove(secret_reveal_webhook_ids, ${p.webhookId}::text) || ARRAY[${p.webhookId}::text])
                      [greatest(cardinality(array_remove(secret_reveal_webhook_ids, ${p.webhookId}::text)) + 2 - ${p.keep}::int, 1):]
              WHERE id = ${p.id}`,
  { prepared: false },
);

/** Takes the one-time permission to show a rotated secret: true for the first page that asks, never again. */
const TAKE_SECRET_REVEAL = defineStatement<{ id: string; webhookId: string }>(
  (
    p,
  ) => sql`UPDATE portal_session SET secret_reveal_webhook_ids = array_remove(secret_reveal_webhook_ids, ${p.webhookId}::text)
              WHERE id = ${p.id} AND ${p.webhookId}::text = ANY (secret_reveal_webhook_ids)`,
  { prepared: false },
);

/** Rows no one can use any more: sessions past the longest lifetime, links a day past their expiry. */
const PURGE_DEAD = defineStatement<{ absoluteSeconds: number }>(
  (p) => sql`WITH gone AS (
               DELETE FROM portal_session WHERE created_at < now() - ${p.absoluteSeconds} * interval '1 second'
             )
             DELETE FROM portal_link WHERE expires_at < now() - interval '1 day'`,
  { prepared: false },
);

/** The portal's links and sessions (tables `portal_link`, `portal_session`), by SHA-256 of their secrets. */
@Injectable()
export class PortalAccessRepository {
  constructor(private readonly database: Database) {}

  async insertLink(link: {
    tokenHash: string;
    account: PortalAccount;
    readOnly: boolean;
    ttlSeconds: number;
  }): Promise<Date> {
    const row = await INSERT_LINK.one(
      {
        tokenHash: link.tokenHash,
        accountType: link.account.type,
        accountId: link.account.id,
        readOnly: link.readOnly,
        ttlSeconds: link.ttlSeconds,
      },
      this.database,
    );
    if (row === null) throw new Error('INSERT … RETURNING returned no row');
    return row.expires_at;
  }

  openLink(tokenHash: string, tx: Transaction) {
    return OPEN_LINK.one({ tokenHash }, tx);
  }

  async refusalOf(tokenHash: string, tx: Transaction): Promise<LinkRefusal> {
    return (await LINK_STATE.one({ tokenHash }, tx))?.refusal ?? 'unknown';
  }

  async insertSession(
    session: { id: string; tokenHash: string; account: PortalAccount; readOnly: boolean; csrfToken: string },
    tx: Transaction,
  ): Promise<void> {
    await INSERT_SESSION.affected(
      {
        id: session.id,
        tokenHash: session.tokenHash,
        accountType: session.account.type,
        accountId: session.account.id,
        readOnly: session.readOnly,
        csrfToken: session.csrfToken,
      },
      tx,
    );
  }

  touchSession(tokenHash: string, lifetimes: { idleSeconds: number; absoluteSeconds: number }) {
    return TOUCH_SESSION.one({ tokenHash, ...lifetimes }, this.database);
  }

  /** Ends a session; inside `tx` when given (a link's opening replaces the session the browser held). */
  async endSession(id: string, tx?: Transaction): Promise<void> {
    await END_SESSION.affected({ id }, tx ?? this.database);
  }

  /**
   * Ends every live session and unopened link of the account; how many of each. Links first: a link
   * being opened at that moment is held by its opening until the opening commits, so the link's
   * statement waits for it, and the sessions' statement after it (a statement of its own, a snapshot
   * of its own) sees the session the opening made and ends it too. Sessions first, it would not see
   * that session, and the link, opened by then, would be left alone: a session outliving its revocation.
   */
  async revokeAccount(account: PortalAccount, tx: Transaction): Promise<{ sessions: number; links: number }> {
    const params = { accountType: account.type, accountId: account.id };
    const links = await REVOKE_LINKS.affected(params, tx);
    const sessions = await REVOKE_SESSIONS.affected(params, tx);
    return { sessions, links };
  }

  async pushFlash(id: string, flash: PortalFlash): Promise<void> {
    await PUSH_FLASH.affected({ id, flash: JSON.stringify([flash]) }, this.database);
  }

  async takeFlashes(id: string): Promise<PortalFlash[]> {
    return (await TAKE_FLASHES.one({ id }, this.database))?.flashes ?? [];
  }

  async allowSecretReveal(id: string, webhookId: string): Promise<void> {
    await ADD_SECRET_REVEAL.affected({ id, webhookId, keep: MAX_PENDING_SECRET_REVEALS }, this.database);
  }

  async takeSecretReveal(id: string, webhookId: string): Promise<boolean> {
    return (await TAKE_SECRET_REVEAL.affected({ id, webhookId }, this.database)) === 1;
  }

  async purgeDead(absoluteSeconds: number): Promise<void> {
    await PURGE_DEAD.affected({ absoluteSeconds }, this.database);
  }
}
