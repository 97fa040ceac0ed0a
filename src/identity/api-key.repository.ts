import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { PrincipalType, Scope } from '../common/auth-context/access';
import { preparedStatement } from '../common/persistence/prepared-statement';
import { SqlStatements } from '../common/persistence/sql-statements';
import { ApiKeyEntity } from './entities/api-key.entity';

export interface ActiveKey {
  id: string;
  principalType: PrincipalType;
  principalId: string;
  scopes: Scope[];
  keyPrefix: string;
}

/** Read on every authenticated request: prepared once per connection. */
const ACTIVE_KEY_BY_HASH = preparedStatement(
  `SELECT id, principal_type, principal_id, scopes, key_prefix FROM api_key WHERE key_hash = $1 AND revoked_at IS NULL`,
);

@Injectable()
export class ApiKeyRepository {
  constructor(
    @InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>,
    private readonly statements: SqlStatements,
  ) {}

  /** One indexed read per request; a revoked key is simply not found. */
  async findActiveByHash(keyHash: string): Promise<ActiveKey | null> {
    const rows: Array<{
      id: string;
      principal_type: PrincipalType;
      principal_id: string;
      scopes: Scope[];
      key_prefix: string;
    }> = await this.statements.rows(ACTIVE_KEY_BY_HASH, [keyHash]);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      id: row.id,
      principalType: row.principal_type,
      principalId: row.principal_id,
      scopes: row.scopes,
      keyPrefix: row.key_prefix,
    };
  }

  async insert(key: Omit<ApiKeyEntity, 'createdAt' | 'revokedAt' | 'lastUsedAt'>): Promise<void> {
    await this.keys.insert(key);
  }

  /** The revoked key's hash, or null when no unrevoked key has that id. */
  async revoke(keyId: string): Promise<string | null> {
    const result = await this.keys
      .createQueryBuilder()
      .update()
      .set({ revokedAt: () => 'now()' })
      .where('id = :keyId AND revoked_at IS NULL', { keyId })
      .returning('key_hash')
      .execute();
    const rows = result.raw as Array<{ key_hash: string }>;
    return rows[0]?.key_hash ?? null;
  }

  async exists(keyId: string): Promise<boolean> {
    return this.keys.exists({ where: { id: keyId } });
  }

  async list(principal?: { type: PrincipalType; id: string }): Promise<ApiKeyEntity[]> {
    return this.keys.find({
      where: principal === undefined ? {} : { principalType: principal.type, principalId: principal.id },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Applies a batch of last-used times in one statement. */
  async recordLastUsed(usage: Map<string, Date>): Promise<void> {
    if (usage.size === 0) return;
    const ids = [...usage.keys()];
    const times = ids.map((id) => usage.get(id)?.toISOString());
    await this.keys.query(
      `UPDATE api_key k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.used_at), u.used_at)
         FROM unnest($1::text[], $2::timestamptz[]) AS u(id, used_at) WHERE k.id = u.id`,
      [ids, times],
    );
  }
}
