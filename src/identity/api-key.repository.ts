import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { PrincipalType, Scope } from '../common/auth-context/access';
import { column, defineColumns, isoTime, isoTimeOrNull } from '../database/sql/sql-columns';
import { sql } from '../database/sql/sql-fragment';
import { defineStatement, NO_PARAMS, type NoParams } from '../database/sql/sql-statement';
import { Database } from '../database/sql/sql-target';
import { ApiKeyEntity } from './entities/api-key.entity';

/** What authentication needs of a key: read on every request whose key the cache does not hold. */
export const ACTIVE_KEY_VIEW = defineColumns({
  id: column<string>('k.id'),
  principalType: column<PrincipalType>('k.principal_type'),
  principalId: column<string>('k.principal_id'),
  scopes: column<Scope[]>('k.scopes'),
  keyPrefix: column<string>('k.key_prefix'),
});
export type ActiveKey = typeof ACTIVE_KEY_VIEW.View;

/** A key as it is listed: everything but its hash, which never leaves this repository. */
export const API_KEY_VIEW = defineColumns({
  id: column<string>('k.id'),
  keyPrefix: column<string>('k.key_prefix'),
  principalType: column<PrincipalType>('k.principal_type'),
  principalId: column<string>('k.principal_id'),
  scopes: column<Scope[]>('k.scopes'),
  name: column<string | null>('k.name'),
  createdAt: isoTime('k.created_at'),
  revokedAt: isoTimeOrNull('k.revoked_at'),
  lastUsedAt: isoTimeOrNull('k.last_used_at'),
});
export type ApiKeyView = typeof API_KEY_VIEW.View;

const ACTIVE_KEY_BY_HASH = defineStatement<{ keyHash: string }, ActiveKey>(
  (p) => sql`SELECT ${ACTIVE_KEY_VIEW.select} FROM api_key k WHERE k.key_hash = ${p.keyHash} AND k.revoked_at IS NULL`,
  { prepared: true },
);

const REVOKE = defineStatement<{ keyId: string }, { keyHash: string }>(
  (p) => sql`UPDATE api_key SET revoked_at = now() WHERE id = ${p.keyId} AND revoked_at IS NULL
             RETURNING key_hash AS "keyHash"`,
  { prepared: false },
);

const ALL_KEYS = defineStatement<NoParams, ApiKeyView>(
  () => sql`SELECT ${API_KEY_VIEW.select} FROM api_key k ORDER BY k.created_at, k.id`,
  { prepared: false },
);

const KEYS_OF_PRINCIPAL = defineStatement<{ principalType: PrincipalType; principalId: string }, ApiKeyView>(
  (p) => sql`SELECT ${API_KEY_VIEW.select} FROM api_key k
              WHERE k.principal_type = ${p.principalType} AND k.principal_id = ${p.principalId}
              ORDER BY k.created_at, k.id`,
  { prepared: false },
);

const RECORD_LAST_USED = defineStatement<{ keyIds: string[]; usedAt: string[] }>(
  (p) => sql`UPDATE api_key k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.used_at), u.used_at)
               FROM unnest(${p.keyIds}::text[], ${p.usedAt}::timestamptz[]) AS u(id, used_at)
              WHERE k.id = u.id`,
  { prepared: false },
);

@Injectable()
export class ApiKeyRepository {
  constructor(
    @InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>,
    private readonly database: Database,
  ) {}

  /** One indexed read per request; a revoked key is simply not found. */
  async findActiveByHash(keyHash: string): Promise<ActiveKey | null> {
    return ACTIVE_KEY_BY_HASH.one({ keyHash }, this.database);
  }

  async insert(key: Omit<ApiKeyEntity, 'createdAt' | 'revokedAt' | 'lastUsedAt'>): Promise<void> {
    await this.keys.insert(key);
  }

  /** The revoked key's hash, or null when no unrevoked key has that id. */
  async revoke(keyId: string): Promise<string | null> {
    return (await REVOKE.one({ keyId }, this.database))?.keyHash ?? null;
  }

  async exists(keyId: string): Promise<boolean> {
    return this.keys.exists({ where: { id: keyId } });
  }

  /** Oldest first: every key, or the keys of one principal. */
  async list(principal?: { type: PrincipalType; id: string }): Promise<ApiKeyView[]> {
    if (principal === undefined) return ALL_KEYS.rows(NO_PARAMS, this.database);
    return KEYS_OF_PRINCIPAL.rows({ principalType: principal.type, principalId: principal.id }, this.database);
  }

  /** Applies a batch of last-used times in one statement. */
  async recordLastUsed(usage: Map<string, Date>): Promise<void> {
    if (usage.size === 0) return;
    const keyIds = [...usage.keys()];
    const usedAt = keyIds.map((id) => usage.get(id)?.toISOString() ?? null) as string[];
    await RECORD_LAST_USED.affected({ keyIds, usedAt }, this.database);
  }
}
