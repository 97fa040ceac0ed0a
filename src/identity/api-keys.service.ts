import { bearerTokenOf } from '../common/auth-context/bearer-token';
import { Injectable } from '@nestjs/common';
import { displayPrefixOf, generateApiKey, hashApiKey, isWellFormedApiKey } from '../../libs/keys/api-key-format';
import { newResourceId } from '../../libs/ids/resource-id';
import {
  isPrincipalType,
  isScope,
  type AuthContext,
  type Principal,
  type PrincipalType,
  type Scope,
} from '../common/auth-context/access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { VenuesService } from '../venues/venues.service';
import { ApiKeyCache } from './api-key-cache';
import { ApiKeyPresenter } from './api-key.presenter';
import { ApiKeyRepository, type ActiveKey } from './api-key.repository';
import { KEY_MANAGER_ROLES, type CreatedKeyResponse, type KeySummary } from './dto/identity.dto';
import { KeyUsageRecorder } from './key-usage.recorder';
import { OrganisersService } from './organisers.service';

export const DEFAULT_SCOPES: Record<'organiser' | 'venue', Scope[]> = {
  organiser: ['events:read', 'orders:read'],
  venue: ['events:read'],
};

/** Scopes a venue key may never hold (api-v1.md Authentication 6). */
const SCOPES_REFUSED_TO_VENUES: Scope[] = ['events:write', 'orders:read'];

export interface MintKeyInput {
  principal: { type?: unknown; id?: unknown };
  scopes?: unknown;
  actorRole: string;
  name?: string;
}

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly organisers: OrganisersService,
    private readonly venues: VenuesService,
    private readonly usage: KeyUsageRecorder,
    private readonly cache: ApiKeyCache,
    private readonly presenter: ApiKeyPresenter,
  ) {}

  /** Mints a key and returns its plaintext, the only time it exists outside the caller's hands. */
  async mint(input: MintKeyInput): Promise<CreatedKeyResponse> {
    this.assertKeyManager(input.actorRole);
    const principal = await this.validPrincipal(input.principal);
    const scopes = this.validScopes(principal.type, input.scopes);
    const key = generateApiKey();
    const id = newResourceId('key');
    const keyPrefix = displayPrefixOf(key);
    await this.keys.insert({
      id,
      keyHash: hashApiKey(key),
      keyPrefix,
      principalType: principal.type,
      principalId: principal.id,
      scopes,
      name: input.name ?? null,
      createdByRole: input.actorRole,
    });
    return { id, key, keyPrefix, principal, scopes };
  }

  /**
   * A revoked key answers 401 from the next request on here, and on every
   * other instance within API_KEY_STALENESS_BOUND_MS: the api_key trigger
   * notifies in this transaction and each instance's revocations listener evicts.
   */
  async revoke(keyId: string, actorRole?: string): Promise<{ id: string; revoked: true }> {
    if (actorRole !== undefined) this.assertKeyManager(actorRole);
    const keyHash = await this.keys.revoke(keyId);
    if (keyHash === null && !(await this.keys.exists(keyId))) throw DomainError.notFound('Key');
    // The notification reaches this instance's listener too, a moment later; the next request here must not wait for it.
    if (keyHash !== null) this.cache.evict(keyHash);
    return { id: keyId, revoked: true };
  }

  async list(principal?: Principal): Promise<KeySummary[]> {
    const rows = await this.keys.list(principal);
    return rows.map((row) => this.presenter.present(row));
  }

  /**
   * Resolves an `Authorization` header to its caller, or null for every kind
   * of failure (missing, wrong scheme, malformed, unknown, revoked), so they
   * all get the same 401. Malformed keys never reach the database. A key the
   * cache holds is answered in the same turn; only a database read is awaited.
   */
  authenticate(authorization: string | undefined): AuthContext | null | Promise<AuthContext | null> {
    const token = bearerTokenOf(authorization);
    if (token === null) return null;
    // The format (and its checksum) is checked on a cache miss only: a key the cache holds was well formed.
    const key = this.cache.lookup(hashApiKey(token), (keyHash) =>
      isWellFormedApiKey(token) ? this.keys.findActiveByHash(keyHash) : Promise.resolve(null),
    );
    return key instanceof Promise ? key.then((loaded) => this.callerOf(loaded)) : this.callerOf(key);
  }

  private callerOf(key: ActiveKey | null): AuthContext | null {
    if (key === null) return null;
    this.usage.used(key.id);
    return {
      principal: { type: key.principalType, id: key.principalId },
      scopes: key.scopes,
      keyId: key.id,
      keyPrefix: key.keyPrefix,
    };
  }

  private assertKeyManager(actorRole: string): void {
    if (!(KEY_MANAGER_ROLES as readonly string[]).includes(actorRole)) {
      throw new DomainError(ErrorCode.Forbidden, 'Only the owner or org_manager role can create or revoke keys.');
    }
  }

  private async validPrincipal(raw: {
    type?: unknown;
    id?: unknown;
  }): Promise<Principal & { type: 'organiser' | 'venue' }> {
    if (!isPrincipalType(raw.type)) {
      throw DomainError.invalidArgument('principal.type must be one of organiser, venue.');
    }
    if (raw.type === 'professional') {
      throw DomainError.invalidArgument('Keys for professional principals cannot be minted yet.');
    }
    if (typeof raw.id !== 'string' || raw.id.length === 0 || raw.id.length > 100) {
      throw DomainError.invalidArgument('principal.id must be a non-empty string.');
    }
    const exists = raw.type === 'organiser' ? await this.organisers.exists(raw.id) : await this.venues.exists(raw.id);
    if (!exists) throw DomainError.invalidArgument(`principal.id does not name an existing ${raw.type}.`);
    return { type: raw.type, id: raw.id };
  }

  private validScopes(type: Exclude<PrincipalType, 'professional'>, raw: unknown): Scope[] {
    if (raw === undefined || raw === null) return [...DEFAULT_SCOPES[type]];
    if (!Array.isArray(raw) || raw.length === 0) {
      throw DomainError.invalidArgument('scopes must be a non-empty array of scopes; omit it for the defaults.');
    }
    const unknown = raw.filter((scope) => !isScope(scope));
    if (unknown.length > 0) {
      throw DomainError.invalidArgument(`Unknown scope ${unknown.map((s) => JSON.stringify(s)).join(', ')}.`);
    }
    const scopes = [...new Set(raw as Scope[])];
    if (type === 'venue') {
      const refused = scopes.filter((scope) => SCOPES_REFUSED_TO_VENUES.includes(scope));
      if (refused.length > 0) throw DomainError.invalidArgument(`Venue keys cannot hold ${refused.join(' or ')}.`);
    }
    return scopes;
  }
}
