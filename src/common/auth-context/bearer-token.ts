/**
 * The one reader of `Authorization: Bearer <token>`, for API keys and the
 * admin token alike. The scheme is case-insensitive (RFC 9110 §11.1); the
 * token is one run of non-space characters. Anything else is no token.
 */
export function bearerTokenOf(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(authorization);
  return match?.[1] ?? null;
}
