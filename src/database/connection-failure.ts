/**
 * Errors thrown while the service opened its first database connection. A
 * listener that cannot resolve its host fails with the same codes
 * (ENOTFOUND, EAI_AGAIN), so the code alone cannot tell an operator whether
 * to look at DATABASE_URL or at HOST: the error is marked where it happens.
 */
const connectionFailures = new WeakSet<object>();

export function markedAsConnectionFailure(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) connectionFailures.add(error);
  return error;
}

export function isConnectionFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && connectionFailures.has(error);
}
