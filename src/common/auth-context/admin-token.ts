import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerTokenOf } from './bearer-token';

export const ADMIN_TOKEN_REQUIRED = 'A valid admin token is required.';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Whether an `Authorization` header carries the admin token, compared in
 * constant time (hashing both sides first makes it so whatever the lengths).
 * With no token configured nothing matches: the internal routes refuse.
 */
export function adminTokenMatcher(adminToken: string | null): (authorization: string | undefined) => boolean {
  const expected = adminToken === null ? null : digest(adminToken);
  return (authorization) => {
    const token = bearerTokenOf(authorization);
    return expected !== null && token !== null && timingSafeEqual(digest(token), expected);
  };
}
