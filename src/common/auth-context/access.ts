/** Contract strings, kept exactly as written (api-v1.md "Principal", "Scope"). */
export const PRINCIPAL_TYPES = ['organiser', 'venue', 'professional'] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

export const SCOPES = ['events:read', 'orders:read', 'events:write', 'webhooks:read', 'webhooks:write'] as const;
export type Scope = (typeof SCOPES)[number];

export interface Principal {
  type: PrincipalType;
  id: string;
}

/** Who is calling, resolved from the API key by the key guard. */
export interface AuthContext {
  principal: Principal;
  scopes: Scope[];
  keyId: string;
  keyPrefix: string;
}

/**
 * The account that owns a rate budget and ten webhook subscriptions: one
 * principal (internal-api.md, "account"). Every key of it shares them.
 */
export function accountOf(principal: Principal): string {
  return `${principal.type}:${principal.id}`;
}

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

export function isPrincipalType(value: unknown): value is PrincipalType {
  return typeof value === 'string' && (PRINCIPAL_TYPES as readonly string[]).includes(value);
}
